-- The job store, schema version 4 (PRAGMA user_version; versions 1 and 2
-- lack samples.rollbacks and samples.latency_us, versions 1 to 3 the
-- system_samples table: Open adds them). Every statement is
-- idempotent so that two sledge processes creating a new store at once
-- both succeed. Structured parts are JSON text, so that new fields (such as
-- per-transaction costs in the summary) need no schema change.

-- One build, run or check.
CREATE TABLE IF NOT EXISTS jobs (
    id             INTEGER PRIMARY KEY AUTOINCREMENT, -- increasing, never reused (a refused command's is given back: Store.Discard)
    kind           TEXT    NOT NULL,                  -- build, run, check
    workload       TEXT    NOT NULL,
    database       TEXT    NOT NULL,                  -- URL, password redacted
    mode           TEXT    NOT NULL DEFAULT '',       -- run: procedure, client, prepared
    vus            INTEGER NOT NULL DEFAULT 0,        -- run: virtual users; build: build virtual users
    status         TEXT    NOT NULL,                  -- queued, running, completed, interrupted, stopped, failed, incomplete
    error          TEXT    NOT NULL DEFAULT '',       -- why it failed, one line
    started_at     TEXT    NOT NULL,                  -- UTC, RFC 3339 with milliseconds
    ended_at       TEXT,                              -- NULL while running
    pid            INTEGER NOT NULL,                  -- the sledge process, to tell a dead one
    proc_start     TEXT    NOT NULL DEFAULT '',       -- boot id and start time of that process: a reused pid is another process
    sledge_version TEXT    NOT NULL,
    spec           TEXT    NOT NULL DEFAULT '{}',     -- JSON: the command and every option, URL redacted
    db_info        TEXT    NOT NULL DEFAULT '{}',     -- JSON: driver, version, transport, settings
    host           TEXT    NOT NULL DEFAULT '{}',     -- JSON: CPU, memory, OS, kernel, Go
    tx_types       TEXT    NOT NULL DEFAULT '[]',     -- JSON: the workload's transaction types, in mix order
    summary        TEXT                               -- JSON: the object --json prints
);

-- The once-a-second transaction counter, appended during the run.
CREATE TABLE IF NOT EXISTS samples (
    job_id     INTEGER NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
    seq        INTEGER NOT NULL,  -- 1, 2, … in time order
    elapsed_ms INTEGER NOT NULL,  -- since the job started, at the end of the interval
    span_ms    INTEGER NOT NULL,  -- length of the interval; the last one may be short
    phase      TEXT    NOT NULL,  -- connect, ramp-up, measure, stop: where most of its transactions completed
    completed  INTEGER NOT NULL,  -- transactions completed (commits and rollbacks), all types
    measured   INTEGER NOT NULL,  -- of those, completed in the measured interval: what the summary counts
    errors     INTEGER NOT NULL,  -- transactions failed
    by_type    TEXT    NOT NULL,  -- JSON array: completed per type, in tx_types order
    rollbacks  TEXT    NOT NULL DEFAULT '[]', -- JSON array: of those, rolled back on purpose (TPC-C's 1% of New-Orders)
    latency_us TEXT    NOT NULL DEFAULT '[]', -- JSON array: Σ latency of those, µs, per type: the second's mean latency
    PRIMARY KEY (job_id, seq)
) WITHOUT ROWID;

-- The once-a-second samples of the server (through sledge agent or read
-- in-process) and of sledge's own host (issue 25), appended during the run
-- with the transaction counter.
CREATE TABLE IF NOT EXISTS system_samples (
    job_id     INTEGER NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
    seq        INTEGER NOT NULL,  -- 1, 2, … in the order the run received them, all sources
    source     TEXT    NOT NULL,  -- server, client_host
    elapsed_ms INTEGER NOT NULL,  -- since the job started, at the end of the second
    phase      TEXT    NOT NULL,  -- the run's phase then: connect, ramp-up, measure, stop
    data       TEXT    NOT NULL,  -- JSON: the second's sysprobe.Interval (counters as deltas, gauges at its end)
    PRIMARY KEY (job_id, seq)
) WITHOUT ROWID;

-- Latency histograms of the measured interval, one per transaction type.
CREATE TABLE IF NOT EXISTS histograms (
    job_id  INTEGER NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
    tx_type TEXT    NOT NULL,
    unit    TEXT    NOT NULL,     -- the recorded values' unit: us
    hdr     TEXT    NOT NULL,     -- HdrHistogram V2 compressed, base64
    PRIMARY KEY (job_id, tx_type)
) WITHOUT ROWID;

-- What the command printed on stderr, progress-bar redraws excluded.
CREATE TABLE IF NOT EXISTS log (
    job_id     INTEGER NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
    seq        INTEGER NOT NULL,
    elapsed_ms INTEGER NOT NULL,
    line       TEXT    NOT NULL,
    PRIMARY KEY (job_id, seq)
) WITHOUT ROWID;
