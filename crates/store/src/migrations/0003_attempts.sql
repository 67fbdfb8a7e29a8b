-- Schema version 3: every failed attempt at a repetition, kept beside the
-- repetitions that succeeded. A failure never deletes a measurement: the point stays
-- pending (with the last failure as its reason) and a resume measures what is
-- missing.

CREATE TABLE failures (
    id      INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id  INTEGER NOT NULL,
    idx     INTEGER NOT NULL,
    rep     INTEGER NOT NULL,  -- the repetition that was being measured
    at      INTEGER NOT NULL,  -- unix seconds
    kind    TEXT    NOT NULL,  -- busy | refused | failed
    reason  TEXT    NOT NULL,
    FOREIGN KEY (run_id, idx) REFERENCES points ON DELETE CASCADE
);

CREATE INDEX failures_by_point ON failures (run_id, idx);
