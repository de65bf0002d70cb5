-- Results a daemon session could not spool (its spool directory refused them for longer
-- than the daemon could hold them in memory), cumulative over the session: heartbeat and
-- stop events carry the count so far. NULL on events written before this column existed.
ALTER TABLE daemon_events ADD COLUMN rows_lost BIGINT;
