-- Schema version 1: runs, their planned points, each point's repetitions, and the
-- raw interval samples of each repetition. Never edit this file once released:
-- change the schema with a new numbered migration instead.

CREATE TABLE runs (
    id               INTEGER PRIMARY KEY AUTOINCREMENT,
    created_at       INTEGER NOT NULL,  -- unix seconds
    tool_version     TEXT    NOT NULL,
    label            TEXT    NOT NULL,
    command          TEXT    NOT NULL,  -- the command line that started the run
    plan_json        TEXT    NOT NULL,
    client_host_json TEXT    NOT NULL,
    server_host_json TEXT,              -- NULL until the server has answered
    status           TEXT    NOT NULL,  -- running | complete | interrupted | failed
    finished_at      INTEGER            -- unix seconds, NULL while running
);

CREATE TABLE points (
    run_id       INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    idx          INTEGER NOT NULL,
    run_order    INTEGER NOT NULL,
    config_json  TEXT    NOT NULL,  -- the full TestSpec of the point
    axes_json    TEXT    NOT NULL,  -- {axis: value}
    status       TEXT    NOT NULL,  -- pending | done | skipped | failed
    reason       TEXT,              -- why skipped or failed
    summary_json TEXT,              -- estimates over the repetitions, when done
    PRIMARY KEY (run_id, idx)
);

CREATE TABLE reps (
    run_id       INTEGER NOT NULL,
    idx          INTEGER NOT NULL,
    rep          INTEGER NOT NULL,
    report_json  TEXT    NOT NULL,  -- the full TestReport, host facts included
    metrics_json TEXT    NOT NULL,  -- {metric: number}
    PRIMARY KEY (run_id, idx, rep),
    FOREIGN KEY (run_id, idx) REFERENCES points ON DELETE CASCADE
);

CREATE TABLE samples (
    run_id       INTEGER NOT NULL,
    idx          INTEGER NOT NULL,
    rep          INTEGER NOT NULL,
    seq          INTEGER NOT NULL,
    start_ns     INTEGER NOT NULL,
    end_ns       INTEGER NOT NULL,
    dir          TEXT    NOT NULL,  -- up | down
    bytes        INTEGER NOT NULL,
    rate_bps     REAL    NOT NULL,
    messages     INTEGER NOT NULL,
    transactions INTEGER NOT NULL,
    PRIMARY KEY (run_id, idx, rep, seq),
    FOREIGN KEY (run_id, idx, rep) REFERENCES reps ON DELETE CASCADE
);
