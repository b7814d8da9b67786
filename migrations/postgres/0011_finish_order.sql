-- The order games finished in, as a number (`done_seq`), taken from the
-- one row of `done_order` in the statement that makes a game done: that
-- row stays locked until the transaction commits, so numbers are given
-- in the order games become visible to readers. `(finished_at, id)` was
-- not that order: a game's time was taken before its write waited, and
-- two games of one millisecond sorted by id, so a game could appear
-- before one already listed, and a reader paging with `after` (or the
-- standings, read on from where they were) never saw it.
ALTER TABLE games ADD COLUMN done_seq BIGINT;
UPDATE games SET done_seq = r.n
FROM (SELECT id, ROW_NUMBER() OVER (ORDER BY finished_at, id) AS n
      FROM games WHERE state = 'done') AS r
WHERE games.id = r.id;
CREATE UNIQUE INDEX games_by_done ON games (done_seq);
CREATE TABLE done_order (n BIGINT NOT NULL);
INSERT INTO done_order (n) SELECT COALESCE(MAX(done_seq), 0) FROM games;
