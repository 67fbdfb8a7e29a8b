-- Schema version 2, in PostgreSQL: the emulated link a lab run used, and an index
-- for finding the points still to run when a run is resumed.

ALTER TABLE runs ADD COLUMN link_json TEXT;  -- link spec and mechanism, NULL if none

CREATE INDEX points_by_status ON points (run_id, status);
