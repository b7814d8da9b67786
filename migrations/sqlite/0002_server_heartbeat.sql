-- The server's heartbeat, in unix seconds of the database's clock,
-- refreshed every few seconds while it serves: a claim (the `server`
-- row) from another host whose heartbeat is older than 30 s is taken
-- for that of a dead server (src/serve/db.rs, docs/ladder.md).
ALTER TABLE server ADD COLUMN heartbeat INTEGER NOT NULL DEFAULT 0;
