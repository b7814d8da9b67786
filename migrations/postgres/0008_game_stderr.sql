-- Each bot's stderr per game, for its owner (issue 48): one row per seat
-- that wrote something, its lines with their turns as zstd-compressed
-- JSON (`results::stderr`), `bytes` of text kept (at most the ladder's
-- `stderr_kb`) and `truncated_bytes` left out past that cap. Pruned with
-- the games' records (`Db::delete_stderr_before`).
CREATE TABLE game_stderr (
    game_id BIGINT NOT NULL REFERENCES games(id) ON DELETE CASCADE,
    seat BIGINT NOT NULL,
    bytes BIGINT NOT NULL,
    truncated_bytes BIGINT NOT NULL,
    body BYTEA NOT NULL,
    PRIMARY KEY (game_id, seat)
);
