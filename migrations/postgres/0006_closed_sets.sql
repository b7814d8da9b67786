-- Closed sets (issue 46): a column that holds one of a few words holds
-- only those: the words of the enums in src/serve/store/mod.rs
-- (`closed_set!`), which a test holds equal to these lists. Before this
-- migration runs, the server names any row that breaks them and stops
-- (`Db::open`), so that it never fails here half-way.

ALTER TABLE owners ADD CONSTRAINT owners_role_closed CHECK (role IN ('owner', 'worker'));

ALTER TABLE versions ADD CONSTRAINT versions_status_closed CHECK (status IN ('receiving', 'queued', 'building', 'checking', 'entered', 'refused', 'retired'));

ALTER TABLE games ADD CONSTRAINT games_state_closed CHECK (state IN ('pending', 'playing', 'checking', 'done', 'held'));

ALTER TABLE leases ADD CONSTRAINT leases_state_closed CHECK (state IN ('active', 'done', 'expired'));

ALTER TABLE rechecks ADD CONSTRAINT rechecks_state_closed CHECK (state IN ('waiting', 'confirmed', 'not_reproduced'));
