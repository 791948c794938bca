-- pgbench's four tables for PostgreSQL (docs/tpcb.md part 1), exactly as
-- pgbench -i creates them (default fillfactor 100), before the load. The
-- primary keys come after the load, in indexes.sql, as pgbench's step p.
-- pgbench_branches is loaded last: its rows mark a finished build.

CREATE TABLE pgbench_history (tid int, bid int, aid int, delta int, mtime timestamp, filler char(22));

CREATE TABLE pgbench_tellers (tid int NOT NULL, bid int, tbalance int, filler char(84)) WITH (fillfactor = 100);

CREATE TABLE pgbench_accounts (aid int NOT NULL, bid int, abalance int, filler char(84)) WITH (fillfactor = 100);

CREATE TABLE pgbench_branches (bid int NOT NULL, bbalance int, filler char(88)) WITH (fillfactor = 100);
