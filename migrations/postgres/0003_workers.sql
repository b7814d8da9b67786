-- Workers (issue 31): migrations/sqlite/0003_workers.sql in PostgreSQL's
-- dialect (BIGINT for INTEGER, which sqlx reads as i64 from both).

-- Games now also wait, `pending`, in the queue the pairing rule fills:
-- pending -> playing (claimed: by the server when `lease_id` is NULL, by
-- a worker under lease `lease_id` otherwise) -> done. `replay` = 1: cut
-- off by a crash of the server, played again first.
ALTER TABLE games ADD COLUMN lease_id TEXT;
ALTER TABLE games ADD COLUMN replay BIGINT NOT NULL DEFAULT 0;

-- A worker's registration (the owner row with role 'worker' holds its
-- name and token): what it said about itself, and when it was last heard.
CREATE TABLE workers (
    owner_id BIGINT PRIMARY KEY REFERENCES owners(id),
    host TEXT NOT NULL,
    cores BIGINT NOT NULL,
    jobs BIGINT NOT NULL,
    arena_version TEXT NOT NULL,
    rules_version BIGINT NOT NULL,
    sandbox TEXT NOT NULL,
    variants TEXT NOT NULL,
    registered_at TEXT NOT NULL,
    last_seen BIGINT NOT NULL
);

-- Every lease ever granted: `active` until its game is uploaded (`done`)
-- or it runs out (`expired`, its game back in the queue). Kept, so that
-- an upload under an old lease is told exactly why it is refused.
CREATE TABLE leases (
    id TEXT PRIMARY KEY,
    game_id BIGINT NOT NULL REFERENCES games(id),
    worker_id BIGINT NOT NULL REFERENCES owners(id),
    state TEXT NOT NULL,
    granted_at TEXT NOT NULL,
    expires BIGINT NOT NULL
);
CREATE INDEX leases_by_state ON leases (state, expires);
