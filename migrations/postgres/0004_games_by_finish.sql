-- The finished games in the order they finished, a page at a time (issue
-- 34: the server no longer holds every row in memory; `/api/games`, the
-- exports and the start-up read them from here by (finished_at, id)).
CREATE INDEX games_by_finish ON games (finished_at, id);
