-- Workers (issue 31, docs/ladder.md "Workers"): games become a queue,
-- claimed by the server itself and by `arena worker` processes under
-- leases. Written for SQLite; the PostgreSQL twin differs only where
-- noted (`INTEGER PRIMARY KEY` -> `BIGSERIAL PRIMARY KEY`, `BLOB` ->
-- `BYTEA`).

-- Games now also wait, `pending`, in the queue the pairing rule fills:
-- pending -> playing (claimed: by the server when `lease_id` is NULL, by
-- a worker under lease `lease_id` otherwise) -> done. `replay` = 1: cut
-- off by a crash of the server, played again first.
ALTER TABLE games ADD COLUMN lease_id TEXT;
ALTER TABLE games ADD COLUMN replay INTEGER NOT NULL DEFAULT 0;

-- A worker's registration (the owner row with role 'worker' holds its
-- name and token): what it said about itself, and when it was last heard.
CREATE TABLE workers (
    owner_id INTEGER PRIMARY KEY REFERENCES owners(id),
    host TEXT NOT NULL,
    cores INTEGER NOT NULL,
    jobs INTEGER NOT NULL,
    arena_version TEXT NOT NULL,
    rules_version INTEGER NOT NULL,
    sandbox TEXT NOT NULL,
    variants TEXT NOT NULL,
    registered_at TEXT NOT NULL,
    last_seen INTEGER NOT NULL
);

-- Every lease ever granted: `active` until its game is uploaded (`done`)
-- or it runs out (`expired`, its game back in the queue). Kept, so that
-- an upload under an old lease is told exactly why it is refused.
CREATE TABLE leases (
    id TEXT PRIMARY KEY,
    game_id INTEGER NOT NULL REFERENCES games(id),
    worker_id INTEGER NOT NULL REFERENCES owners(id),
    state TEXT NOT NULL,
    granted_at TEXT NOT NULL,
    expires INTEGER NOT NULL
);
CREATE INDEX leases_by_state ON leases (state, expires);
