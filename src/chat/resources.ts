// The resources of the contract, as TypeBox schemas: one definition gives the TypeScript types, the HTTP
// response serialization and the OpenAPI document.
import { Type, type Static } from 'typebox';

const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(schema: T) => Type.Union([schema, Type.Null()]);
const Id = Type.Integer({ minimum: 1 });
const Timestamp = Type.String({ format: 'date-time', description: 'ISO 8601 UTC, e.g. 2026-11-20T09:30:00.000Z' });

export const UserResource = Type.Object(
  { id: Id, name: Type.String(), avatar_url: Nullable(Type.String()) });
export type UserResource = Static<typeof UserResource>;

export const AttachmentResource = Type.Object(
  { id: Id, name: Type.String(), mime_type: Type.String(), size: Type.Integer(), url: Type.String() });
export type AttachmentResource = Static<typeof AttachmentResource>;

export const ReplyPreview = Type.Object({
  id: Id,
  body: Nullable(Type.String()),
  sender: UserResource,
  deleted: Type.Boolean(),
});
export const ForwardedFrom = Type.Object({ message_id: Id, conversation_id: Id, sender: UserResource });

export const MessageResource = Type.Object(
  {
    id: Id,
    conversation_id: Id,
    body: Nullable(Type.String()),
    attachment: Nullable(AttachmentResource),
    sender: UserResource,
    reply_to: Nullable(ReplyPreview),
    forwarded_from: Nullable(ForwardedFrom),
    created_at: Timestamp,
    edited_at: Nullable(Timestamp),
  });
export type MessageResource = Static<typeof MessageResource>;

export const ParticipantResource = Type.Object(
  {
    id: Id,
    name: Type.String(),
    avatar_url: Nullable(Type.String()),
    role: Type.Union([Type.Literal('owner'), Type.Literal('admin'), Type.Literal('member')]),
  });
export type ParticipantResource = Static<typeof ParticipantResource>;

export const ConversationResource = Type.Object(
  {
    id: Id,
    type: Type.Union([Type.Literal('direct'), Type.Literal('group')]),
    name: Nullable(Type.String()),
    avatar_url: Nullable(Type.String()),
    participant_count: Type.Integer(),
    participants_preview: Type.Array(ParticipantResource),
    last_message: Nullable(MessageResource),
    unread_count: Type.Integer(),
    last_read_at: Nullable(Timestamp),
    created_at: Timestamp,
    updated_at: Timestamp,
  });
export type ConversationResource = Static<typeof ConversationResource>;

export const PresenceResource = Type.Object({
  user_id: Id,
  is_online: Type.Boolean(),
  last_seen_at: Nullable(Timestamp),
});
export type PresenceResource = Static<typeof PresenceResource>;

export const iso = (date: Date): string => date.toISOString();
export const isoOrNull = (date: Date | null): string | null => (date ? date.toISOString() : null);
