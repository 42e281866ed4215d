// A list cursor of a time and an id ("<ms since the epoch>.<id>"): the position after an item of a list ordered by
// a time, then id, newest first (GET /threads by last reply, GET /conversations/{id}/pins by pinning time).
import { invalid } from '../contract/api-errors.js';

export interface TimePosition {
  readonly at: Date;
  readonly id: number;
}

export const encodeTimeCursor = (position: TimePosition): string => `${position.at.getTime()}.${position.id}`;

/** The position a cursor of encodeTimeCursor holds; 422 on `cursor` for anything else. */
export function decodeTimeCursor(cursor: string): TimePosition {
  const match = /^(\d{1,15})\.(\d{1,19})$/.exec(cursor);
  if (!match || !Number.isSafeInteger(Number(match[2]))) throw invalid('cursor', 'The cursor is not one this API returned.');
  return { at: new Date(Number(match[1])), id: Number(match[2]) };
}

/** A list cursor of an id alone (the last item's, of a list newest first by id: reports, the audit log); 422 on `cursor` otherwise. */
export function decodeIdCursor(cursor: string | undefined): number | undefined {
  if (cursor === undefined) return undefined;
  if (!/^[1-9]\d{0,15}$/.test(cursor)) throw invalid('cursor', 'The cursor is not one this API returned.');
  return Number(cursor);
}
