-- The ladder's store (src/serve/db.rs, docs/ladder.md). Written for
-- SQLite and PostgreSQL alike where they agree.

-- Owners (and, later, workers): a name and the SHA-256 of their token.
CREATE TABLE owners (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    token_hash TEXT NOT NULL UNIQUE,
    role TEXT NOT NULL DEFAULT 'owner',
    created_at TEXT NOT NULL,
    revoked_at TEXT
);

-- A bot: a name, owned by one owner, with versions.
CREATE TABLE bots (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    owner_id INTEGER NOT NULL REFERENCES owners(id),
    created_at TEXT NOT NULL
);

-- One upload of a bot: queued -> building -> checking -> entered or
-- refused; entered -> retired when replaced or withdrawn.
CREATE TABLE versions (
    id INTEGER PRIMARY KEY,
    bot_id INTEGER NOT NULL REFERENCES bots(id),
    number INTEGER NOT NULL,
    status TEXT NOT NULL,
    detail TEXT NOT NULL DEFAULT '',
    report TEXT NOT NULL DEFAULT '',
    folder TEXT NOT NULL,
    sha256 TEXT NOT NULL,
    bytes INTEGER NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    UNIQUE (bot_id, number)
);

-- Games: `playing` from the moment one is handed out, `done` once its
-- row and record are in. A `playing` game found at start-up was cut off
-- by a crash: it is played again, once, with the same seats (and the
-- same seed, which is drawn from the ladder's seed and the game's id).
CREATE TABLE games (
    id INTEGER PRIMARY KEY,
    state TEXT NOT NULL,
    variant INTEGER NOT NULL,
    seats TEXT NOT NULL,
    created_at TEXT NOT NULL,
    finished_at TEXT,
    row_json TEXT,
    record BLOB
);
CREATE INDEX games_by_state ON games (state);

-- Uploads, for the per-owner rate limit.
CREATE TABLE uploads (
    id INTEGER PRIMARY KEY,
    owner_id INTEGER NOT NULL REFERENCES owners(id),
    at INTEGER NOT NULL,
    bytes INTEGER NOT NULL
);

-- The one server of this database: its pid, host and address.
CREATE TABLE server (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    pid INTEGER NOT NULL,
    host TEXT NOT NULL,
    address TEXT NOT NULL,
    started_at TEXT NOT NULL
);
