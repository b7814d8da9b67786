-- The order games finished in, as a number (`done_seq`), given in the
-- statement that makes a game done, under the store's write lock: the
-- order readers see games become visible in. `(finished_at, id)` was not:
-- a game's time was taken before its write waited for the lock, and two
-- games of one millisecond sorted by id, so a game could appear before
-- one already listed, and a reader paging with `after` (or the standings,
-- read on from where they were) never saw it.
ALTER TABLE games ADD COLUMN done_seq INTEGER;
UPDATE games SET done_seq = r.n
FROM (SELECT id, ROW_NUMBER() OVER (ORDER BY finished_at, id) AS n
      FROM games WHERE state = 'done') AS r
WHERE games.id = r.id;
CREATE UNIQUE INDEX games_by_done ON games (done_seq);
