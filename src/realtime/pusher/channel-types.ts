// The one place that maps a channel name to its type (Pusher decides by prefix) and says which
// names are legal at all.

export const CHANNEL_TYPES = ['public', 'private', 'private-encrypted', 'presence'] as const;
export type ChannelType = (typeof CHANNEL_TYPES)[number];

/** Pusher's limits: at most 164 characters from [A-Za-z0-9_\-=@,.;]. */
const CHANNEL_NAME = /^[A-Za-z0-9_\-=@,.;]{1,164}$/;

export function isValidChannelName(name: string): boolean {
  return CHANNEL_NAME.test(name);
}

export function channelTypeOf(name: string): ChannelType {
  if (name.startsWith('private-encrypted-')) return 'private-encrypted';
  if (name.startsWith('private-')) return 'private';
  if (name.startsWith('presence-')) return 'presence';
  return 'public';
}
