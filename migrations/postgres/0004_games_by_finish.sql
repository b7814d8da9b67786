-- The finished games in the order they finished, a page at a time (issue
-- 34: the server no longer holds every row in memory; `/api/games`, the
-- exports and the start-up read them from here: `state = 'done' AND
-- (finished_at, id) > (...) ORDER BY finished_at, id`, one range of this
-- index).
CREATE INDEX games_by_finish ON games (state, finished_at, id);
