-- Each version's overall rating at each complete fit of the ladder's
-- ratings (`[games, elo, low, high]`, the bot page's "rating over time"),
-- kept across restarts: it was held in memory only, and a restart began
-- it again. Thinned as the server's copy is: past 400 points of one
-- version, every other one is deleted.
CREATE TABLE rating_history (
    player TEXT NOT NULL,
    games INTEGER NOT NULL,
    elo REAL NOT NULL,
    low REAL NOT NULL,
    high REAL NOT NULL,
    PRIMARY KEY (player, games)
);
