-- Each version's overall rating at each complete fit of the ladder's
-- ratings (`[games, elo, low, high]`, the bot page's "rating over time"),
-- kept across restarts: it was held in memory only, and a restart began
-- it again. Thinned as the server's copy is: past 400 points of one
-- version, every other one is deleted.
CREATE TABLE rating_history (
    player TEXT NOT NULL,
    games BIGINT NOT NULL,
    elo DOUBLE PRECISION NOT NULL,
    low DOUBLE PRECISION NOT NULL,
    high DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (player, games)
);
