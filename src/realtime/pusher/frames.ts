// Frame codec for Pusher protocol v7.
// Server → client: {"event": ..., "channel"?: ..., "data": "<JSON text>"} for connection_established,
// pusher_internal:* and channel events: `data` is a string holding JSON (pusher-js JSON-parses it a second
// time), so an object payload is encoded twice. pusher:error, pusher:subscription_error, pusher:signin_success
// and pusher:pong carry `data` as a plain object, as hosted Pusher sends them (the Swift, Java and Flutter
// clients parse an object there; pusher-js takes either): see encodeObjectFrame.
// Client → server: pusher-js sends `data` as an object, other clients as a JSON string; both are
// accepted. Parsing never throws: a bad frame is a value the caller turns into a pusher:error. That includes a
// `data` nested too deeply to be encoded again (JSON.parse reads any depth, JSON.stringify recurses and runs out
// of stack): it is refused at MAX_DATA_DEPTH levels, before anything else looks at it.

export interface ClientFrame {
  readonly event: string;
  readonly channel: string | undefined;
  /** The decoded `data` (an object for every pusher:* event we handle), or undefined when absent. */
  readonly data: unknown;
  /** `data` as the client sent it: a string stays the same string, anything else is its JSON. Relayed by client events. */
  readonly dataText: string | undefined;
}

export type ParsedFrame =
  | { readonly ok: true; readonly frame: ClientFrame }
  | { readonly ok: false; readonly reason: string };

/** The `data` member as it appears on the wire: a JSON string literal whose content is JSON. */
export function encodeData(data: unknown): string {
  // undefined has no JSON form; Pusher's "no payload" is an empty object.
  return JSON.stringify(JSON.stringify(data) ?? '{}');
}

/**
 * Builds a frame around an already encoded `data` literal (see encodeData). Publishing encodes the
 * payload once and calls this once per channel, so no JSON work is repeated per socket.
 */
export function frameWithEncodedData(event: string, encodedData: string, channel?: string): string {
  return channel === undefined
    ? `{"event":${JSON.stringify(event)},"data":${encodedData}}`
    : `{"event":${JSON.stringify(event)},"channel":${JSON.stringify(channel)},"data":${encodedData}}`;
}

/** A client event as the other subscribers get it: `data` is the sender's text; presence channels add the sender's user_id. */
export function clientEventFrame(event: string, channel: string, dataText: string, userId?: string): string {
  const frame = frameWithEncodedData(event, JSON.stringify(dataText), channel);
  return userId === undefined ? frame : `${frame.slice(0, -1)},"user_id":${JSON.stringify(userId)}}`;
}

export function encodeFrame(event: string, data: unknown, channel?: string): string {
  return frameWithEncodedData(event, encodeData(data), channel);
}

/** A frame whose `data` is the object itself, not its JSON text (pusher:error, subscription_error, signin_success, pong). */
export function encodeObjectFrame(event: string, data: object, channel?: string): string {
  return channel === undefined ? JSON.stringify({ event, data }) : JSON.stringify({ event, channel, data });
}

/** The deepest `data` a frame may have (arrays and objects inside each other). Pusher payloads are shallow. */
export const MAX_DATA_DEPTH = 64;

export function parseClientFrame(text: string): ParsedFrame {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { ok: false, reason: 'Invalid JSON' };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return { ok: false, reason: 'A frame must be a JSON object' };
  }
  const { event, channel, data } = value as Record<string, unknown>;
  if (typeof event !== 'string' || event === '') {
    return { ok: false, reason: 'A frame must have a string "event"' };
  }
  if (channel !== undefined && typeof channel !== 'string') {
    return { ok: false, reason: '"channel" must be a string' };
  }
  if (tooDeep(data, MAX_DATA_DEPTH)) return { ok: false, reason: `"data" is nested too deeply (more than ${MAX_DATA_DEPTH} levels)` };
  const dataText = typeof data === 'string' ? data : data === undefined ? undefined : JSON.stringify(data);
  return { ok: true, frame: { event, channel, data: decodeData(data), dataText } };
}

/**
 * Whether a decoded JSON value has arrays or objects nested deeper than maxDepth. Walked with a stack of its
 * own, so any depth is measured without recursion; a value's members are each visited once.
 */
export function tooDeep(value: unknown, maxDepth: number): boolean {
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length > 0) {
    const [node, depth] = stack.pop()!;
    if (typeof node !== 'object' || node === null) continue;
    if (depth >= maxDepth) return true;
    for (const member of Array.isArray(node) ? node : Object.values(node)) {
      if (typeof member === 'object' && member !== null) stack.push([member, depth + 1]);
    }
  }
  return false;
}

/** Reads a string member of a decoded `data` object; anything else reads as undefined. */
export function stringField(data: unknown, key: string): string | undefined {
  if (typeof data !== 'object' || data === null) return undefined;
  const value = (data as Record<string, unknown>)[key];
  return typeof value === 'string' ? value : undefined;
}

function decodeData(data: unknown): unknown {
  if (typeof data !== 'string') return data;
  try {
    return JSON.parse(data);
  } catch {
    return data; // a plain string payload is legal for client events
  }
}
