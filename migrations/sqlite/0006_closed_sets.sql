-- Closed sets (issue 46): a column that holds one of a few words holds
-- only those: the words of the enums in src/serve/store/mod.rs
-- (`closed_set!`), which a test holds equal to these lists. Before this
-- migration runs, the server names any row that breaks them and stops
-- (`Db::open`), so that it never fails here half-way.
--
-- SQLite cannot add a CHECK to a table that exists (ALTER TABLE has no
-- ADD CONSTRAINT) and rebuilding `games` would copy every row, so the
-- same checks are triggers, before each insert and each update of the
-- column: the write is refused with the column's name and its words.

CREATE TRIGGER owners_role_closed_insert BEFORE INSERT ON owners
WHEN NEW.role NOT IN ('owner', 'worker')
BEGIN SELECT RAISE(ABORT, 'owners.role must be one of owner, worker'); END;

CREATE TRIGGER owners_role_closed_update BEFORE UPDATE OF role ON owners
WHEN NEW.role NOT IN ('owner', 'worker')
BEGIN SELECT RAISE(ABORT, 'owners.role must be one of owner, worker'); END;

CREATE TRIGGER versions_status_closed_insert BEFORE INSERT ON versions
WHEN NEW.status NOT IN ('receiving', 'queued', 'building', 'checking', 'entered', 'refused', 'retired')
BEGIN SELECT RAISE(ABORT, 'versions.status must be one of receiving, queued, building, checking, entered, refused, retired'); END;

CREATE TRIGGER versions_status_closed_update BEFORE UPDATE OF status ON versions
WHEN NEW.status NOT IN ('receiving', 'queued', 'building', 'checking', 'entered', 'refused', 'retired')
BEGIN SELECT RAISE(ABORT, 'versions.status must be one of receiving, queued, building, checking, entered, refused, retired'); END;

CREATE TRIGGER games_state_closed_insert BEFORE INSERT ON games
WHEN NEW.state NOT IN ('pending', 'playing', 'checking', 'done', 'held')
BEGIN SELECT RAISE(ABORT, 'games.state must be one of pending, playing, checking, done, held'); END;

CREATE TRIGGER games_state_closed_update BEFORE UPDATE OF state ON games
WHEN NEW.state NOT IN ('pending', 'playing', 'checking', 'done', 'held')
BEGIN SELECT RAISE(ABORT, 'games.state must be one of pending, playing, checking, done, held'); END;

CREATE TRIGGER leases_state_closed_insert BEFORE INSERT ON leases
WHEN NEW.state NOT IN ('active', 'done', 'expired')
BEGIN SELECT RAISE(ABORT, 'leases.state must be one of active, done, expired'); END;

CREATE TRIGGER leases_state_closed_update BEFORE UPDATE OF state ON leases
WHEN NEW.state NOT IN ('active', 'done', 'expired')
BEGIN SELECT RAISE(ABORT, 'leases.state must be one of active, done, expired'); END;

CREATE TRIGGER rechecks_state_closed_insert BEFORE INSERT ON rechecks
WHEN NEW.state NOT IN ('waiting', 'confirmed', 'not_reproduced')
BEGIN SELECT RAISE(ABORT, 'rechecks.state must be one of waiting, confirmed, not_reproduced'); END;

CREATE TRIGGER rechecks_state_closed_update BEFORE UPDATE OF state ON rechecks
WHEN NEW.state NOT IN ('waiting', 'confirmed', 'not_reproduced')
BEGIN SELECT RAISE(ABORT, 'rechecks.state must be one of waiting, confirmed, not_reproduced'); END;
