-- Forfeits re-checked and workers quarantined (issue 47, item 7;
-- docs/security.md "Forged results"). Written for SQLite; the PostgreSQL
-- twin differs only where noted (`INTEGER PRIMARY KEY` -> an identity
-- column, `INTEGER` -> `BIGINT`, `BLOB` -> `BYTEA`).

-- A game a worker uploaded with a forfeit waits, `checking`, until the
-- server has played it again up to the forfeit: then `done` (the fault
-- came again) or `pending` once more (it did not: played again). A game
-- of a quarantined worker that had counted is `held`: out of the
-- standings and the exports, and played again under a new id.

-- Every forfeit a worker reported, as it reported it, and what its
-- re-check found: `waiting`, then `confirmed` or `not_reproduced`.
CREATE TABLE rechecks (
    id INTEGER PRIMARY KEY,
    game_id INTEGER NOT NULL REFERENCES games(id),
    worker_id INTEGER NOT NULL REFERENCES owners(id),
    lease_id TEXT NOT NULL,
    reason TEXT NOT NULL,
    offender INTEGER NOT NULL,
    row_json TEXT NOT NULL,
    record BLOB NOT NULL,
    state TEXT NOT NULL,
    found TEXT,
    tries INTEGER NOT NULL DEFAULT 0,
    reported_at TEXT NOT NULL,
    checked_at TEXT
);
CREATE INDEX rechecks_by_state ON rechecks (state, id);
CREATE INDEX rechecks_by_worker ON rechecks (worker_id, state);

-- A worker in quarantine: since when and why (NULL: not in quarantine).
-- Its claims and uploads are refused until an organiser releases it
-- (`arena serve LADDER --release-worker NAME`).
ALTER TABLE workers ADD COLUMN quarantined_at TEXT;
ALTER TABLE workers ADD COLUMN quarantine_reason TEXT;
