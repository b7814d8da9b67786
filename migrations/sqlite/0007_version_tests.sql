-- Tests between versions (issue 48, item 1; docs/ladder.md "Tests
-- between versions"). Written for SQLite; the PostgreSQL twin differs
-- only where noted (`INTEGER PRIMARY KEY` -> an identity column,
-- `INTEGER` -> `BIGINT`, `REAL` -> `DOUBLE PRECISION`).

-- A test of a new version against the version it would replace: asked
-- for with the upload (`waiting` until the new version is entered), then
-- `running`, and at its end `h1`, `h0` or `budget` (its games played
-- with no decision), or `cancelled` (one of its versions left the
-- ladder). Its bounds and what happens to the old version are fixed
-- when it is asked for; its counts are the last evaluation's (the SPRT
-- of `arena sprt` on its games), kept for the pages.
CREATE TABLE version_tests (
    id INTEGER PRIMARY KEY,
    new_version_id INTEGER NOT NULL REFERENCES versions(id),
    old_version_id INTEGER REFERENCES versions(id),
    status TEXT NOT NULL CHECK (status IN ('waiting', 'running', 'h1', 'h0', 'budget', 'cancelled')),
    elo0 REAL NOT NULL,
    elo1 REAL NOT NULL,
    alpha REAL NOT NULL,
    beta REAL NOT NULL,
    max_games INTEGER NOT NULL,
    outcome TEXT NOT NULL CHECK (outcome IN ('retire-on-h1', 'keep-both', 'owner')),
    -- What became of the old version: '' while running; `retired`,
    -- `kept`, or `undecided` (the owner has yet to say).
    old_fate TEXT NOT NULL DEFAULT '' CHECK (old_fate IN ('', 'retired', 'kept', 'undecided')),
    games_queued INTEGER NOT NULL DEFAULT 0,
    games INTEGER NOT NULL DEFAULT 0,
    penta TEXT NOT NULL DEFAULT '0,0,0,0,0',
    wins INTEGER NOT NULL DEFAULT 0,
    draws INTEGER NOT NULL DEFAULT 0,
    losses INTEGER NOT NULL DEFAULT 0,
    llr REAL NOT NULL DEFAULT 0,
    elo REAL,
    -- The game of the last evaluation: at a verdict, the game that
    -- made the LLR reach its bound (the games after it do not count).
    last_game TEXT,
    elo_err REAL,
    created_at TEXT NOT NULL,
    started_at TEXT,
    finished_at TEXT
);
CREATE INDEX version_tests_by_status ON version_tests (status, id);
CREATE INDEX version_tests_by_new ON version_tests (new_version_id);

-- A test's games: `test_id` names it; a pair's second game plays the
-- seed and opening of game `opening_of` (its first, seats swapped) and
-- shares its group, so that `arena sprt` on the export counts the pair.
ALTER TABLE games ADD COLUMN test_id INTEGER REFERENCES version_tests(id);
ALTER TABLE games ADD COLUMN opening_of INTEGER;
CREATE INDEX games_by_test ON games (test_id, state);
