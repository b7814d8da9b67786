-- Which variant each number of `games.variant` stands for: a game keeps
-- its variant by its place in the ladder file's `variants`, and a file
-- reordered or cut between two runs would give every game of a moved
-- variant another one (the games browser's filter, the pairing of a
-- pending game). At each start the server numbers the file's variants
-- 0, 1, ... and any it no longer has after them, and renumbers the games
-- to match. Empty until the first start after this migration, which
-- takes the file's order as the store's.
CREATE TABLE variant_order (
    idx BIGINT PRIMARY KEY,
    label TEXT NOT NULL UNIQUE
);
