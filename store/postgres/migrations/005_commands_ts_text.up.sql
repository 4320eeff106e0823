-- A command's ts as its client gave it (gateway-api §4.1: stored as
-- given), kept beside the timestamptz column, which holds it parsed when
-- it is a time: the text is what the wire carries, a time or not. NULL
-- for a ts the store stamped or a Go caller set as a time. Idempotent,
-- as every migration here (a test replays them on a migrated schema).
ALTER TABLE commands ADD COLUMN IF NOT EXISTS ts_text text;
