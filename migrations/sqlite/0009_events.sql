-- Events on the ladder (issue 52, item 4; docs/ladder.md "Events"): a
-- Swiss among the versions entered when the organiser starts it, its
-- games in the same queue as every ladder game. Written for SQLite; the
-- PostgreSQL twin differs only where noted (`INTEGER PRIMARY KEY` -> an
-- identity column, `INTEGER` -> `BIGINT`).

-- An event: `running` until its last round is committed (`finished`),
-- or `cancelled` (one of its entrants left the ladder). `entrants` are
-- its versions' ids, comma-separated, in the order they are numbered
-- (the initial order is drawn from `seed`).
CREATE TABLE events (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    format TEXT NOT NULL CHECK (format IN ('swiss')),
    status TEXT NOT NULL CHECK (status IN ('running', 'finished', 'cancelled')),
    rounds INTEGER NOT NULL,
    games_per_pairing INTEGER NOT NULL,
    seed INTEGER NOT NULL,
    entrants TEXT NOT NULL,
    detail TEXT NOT NULL DEFAULT '',
    created_at TEXT NOT NULL,
    finished_at TEXT
);

-- Each round as it was paired (JSON: pairs, bye, threes, byes of the
-- 3-player variants, by entrant index) and when: a round is paired only
-- from the committed games of the rounds before, and a restart pairs it
-- the same (the server checks its replay against this).
CREATE TABLE event_rounds (
    event_id INTEGER NOT NULL REFERENCES events(id),
    round INTEGER NOT NULL,
    pairing TEXT NOT NULL,
    paired_at TEXT NOT NULL,
    PRIMARY KEY (event_id, round)
);

-- An event's games: `event_id` names it, `event_game` the game's place
-- in the Swiss (`s002-kisolo-t001-g0-o1`, as a league's game ids).
ALTER TABLE games ADD COLUMN event_id INTEGER REFERENCES events(id);
ALTER TABLE games ADD COLUMN event_game TEXT;
CREATE INDEX games_by_event ON games (event_id, state);
