-- pgbench's builtin statements for PostgreSQL. The contract (names,
-- argument order, result columns) is documented in
-- internal/workload/tpcb/stmts.go. Arguments are $1..$n, each used once,
-- in order of appearance. The same text runs as a prepared statement
-- (--mode prepared) and with the values written in by pgx (--mode client,
-- which sends what pgbench -M simple sends).
--
-- Isolation is PostgreSQL's default READ COMMITTED, as pgbench's.

-- name: tpcb.scale
SELECT (SELECT count(*) FROM pgbench_branches), (SELECT count(*) FROM pgbench_tellers);

-- name: schema.built
-- For procedure mode's check at connect time (conn.go): a built schema has
-- branches. Fails with 42P01 (read as "not built") without the table.
SELECT count(*) FROM (SELECT 1 FROM pgbench_branches LIMIT 1) AS b;

-- name: tpcb.account_update
UPDATE pgbench_accounts SET abalance = abalance + $1 WHERE aid = $2;

-- name: tpcb.account_select
SELECT abalance FROM pgbench_accounts WHERE aid = $1;

-- name: tpcb.teller_update
UPDATE pgbench_tellers SET tbalance = tbalance + $1 WHERE tid = $2;

-- name: tpcb.branch_update
UPDATE pgbench_branches SET bbalance = bbalance + $1 WHERE bid = $2;

-- name: tpcb.history_insert
INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES ($1, $2, $3, $4, CURRENT_TIMESTAMP);

-- Procedure mode: one call per transaction (procedures.sql). Functions
-- (routines=functions, the default) are called with SELECT; procedures
-- (routines=procedures) with CALL, their INOUT result passed as NULL.

-- name: tpcb-like.call
SELECT pgbench_tpcb_like($1, $2, $3, $4);

-- name: simple-update.call
SELECT pgbench_simple_update($1, $2, $3, $4);

-- name: tpcb-like.call_procedure
CALL pgbench_tpcb_like($1, $2, $3, $4, NULL);

-- name: simple-update.call_procedure
CALL pgbench_simple_update($1, $2, $3, $4, NULL);
