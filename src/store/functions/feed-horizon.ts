// parley_feed_horizon(): where the change feed stands for the calling statement (src/store/change-feed.ts). One row:
// the horizon of the statement's snapshot (the oldest transaction still running, leaving out those known to run in
// another database of the same server), the snapshot's xmax, and the snapshot itself (pg_snapshot text).
//
// Transaction ids are the server's, not the database's, so pg_snapshot_xmin alone would let any long transaction
// next door (a bulk load, a migration of another application) hold back every sync here; a transaction of another
// database never writes this feed. Known: its id is a backend's in pg_stat_activity under another database (the
// role needs to see other roles' sessions, pg_read_all_stats, for those; unknown ones count as running here). A
// transaction that ended since the snapshot is no longer there, so it counts too: its rows are not in the snapshot.
//
// A function because of pg_stat_activity: a view over several catalogs, whose planning took 0.28 ms of each
// cursor taken (GET /sync without since, the inbox) when the statement was sent as text; a plpgsql function keeps
// its plan for the connection. Stable: it reads the calling statement's snapshot, as the statement itself would.
// A repeatable definition (src/store/functions/index.ts).
export const FEED_HORIZON = `create or replace function parley_feed_horizon()
    returns table (horizon bigint, xmax bigint, snapshot text)
    language plpgsql stable
    rows 1
    as $$
    begin
      return query
        select coalesce(
            (select min(x) from pg_snapshot_xip(s0.snap) x
              where x::text::bigint % 4294967296 not in (
                select a.backend_xid::text::bigint from pg_stat_activity a
                where a.backend_xid is not null and a.datname is distinct from current_database())),
            pg_snapshot_xmax(s0.snap))::text::bigint,
          pg_snapshot_xmax(s0.snap)::text::bigint,
          s0.snap::text
        from (select pg_current_snapshot() as snap) s0;
    end
    $$`;
