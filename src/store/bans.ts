// What group bans (group-bans.ts) and service-wide bans (user-bans.ts) share: a ban holds until its `until`, or
// until it is lifted when it has none. The send function (functions/send.ts) says the same in its own SQL.
import { sql, type RawBuilder } from 'kysely';

/** SQL: the ban whose `until` column is this one holds at `now`. */
export const inForce = (until: string, now: Date): RawBuilder<boolean> => sql<boolean>`(${sql.ref(until)} is null or ${sql.ref(until)} > ${now})`;

/** The same for a ban read: its `until` is none, or still to come. */
export const holds = (until: Date | null, now: Date): boolean => until === null || until > now;
