-- A game's analysis (issue 51), computed by the server when an owner of
-- one of its bots asks for it (`POST /api/games/ID/analysis`): `body` is
-- the verdicts as JSON lines (`arena analyse --json`). Shown on the
-- game's page; pruned with the games' records (`Db::prune`).
CREATE TABLE game_analysis (
    game_id INTEGER PRIMARY KEY REFERENCES games(id) ON DELETE CASCADE,
    owner_id INTEGER NOT NULL,
    made_at TEXT NOT NULL,
    body TEXT NOT NULL
);
