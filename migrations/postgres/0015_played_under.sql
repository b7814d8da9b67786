-- What the ladder's games are played under (the ladder file's time
-- control, ply cap, limits, sandbox and variants' options, as JSON), as
-- the last server to start found it: the next start compares its file's
-- with it and says what changed (src/serve/mod.rs, `note_played_under`).
-- One row, written by each start.
CREATE TABLE played_under (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    settings TEXT NOT NULL
);
