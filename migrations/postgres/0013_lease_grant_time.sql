-- When each lease was granted, in unix seconds (`granted_unix`), beside
-- its RFC 3339 text (`granted_at`): a heartbeat ends the leases past
-- their life (docs/ladder.md, "Workers") in the statement that renews
-- the others, comparing numbers, where it read each lease's text first
-- and parsed it. The active leases granted before this migration get
-- theirs from their text; one whose text does not read keeps NULL and is
-- renewed, as before.
ALTER TABLE leases ADD COLUMN granted_unix BIGINT;
UPDATE leases SET granted_unix = CAST(FLOOR(EXTRACT(EPOCH FROM CAST(granted_at AS TIMESTAMPTZ))) AS BIGINT)
WHERE state = 'active'
  AND granted_at ~ '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?Z$';
