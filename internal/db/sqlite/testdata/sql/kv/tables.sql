-- Test workload "kv": every value type, and a counter for write contention.
CREATE TABLE item (
  id INTEGER PRIMARY KEY,
  i  INTEGER,
  f  REAL,
  s  TEXT,
  n  TEXT,
  ts TIMESTAMP
);
CREATE TABLE counter (id INTEGER PRIMARY KEY, n INTEGER NOT NULL, changed INTEGER NOT NULL DEFAULT 0);
INSERT INTO counter (id, n) VALUES (1, 0);
