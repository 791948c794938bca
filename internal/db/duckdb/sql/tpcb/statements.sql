-- pgbench's builtin statements for DuckDB. The contract (names, argument
-- order, result columns) is documented in internal/workload/tpcb/stmts.go.
-- Arguments are $1..$n, each used once, in order of appearance.
--
-- DuckDB's concurrency is optimistic: two transactions that update the
-- same branch conflict, and the second fails and is retried
-- (docs/duckdb.md). The history row's mtime is the database clock.

-- name: tpcb.scale
SELECT (SELECT count(*) FROM pgbench_branches), (SELECT count(*) FROM pgbench_tellers);

-- name: tpcb.account_update
UPDATE pgbench_accounts SET abalance = abalance + $1 WHERE aid = $2;

-- name: tpcb.account_select
SELECT abalance FROM pgbench_accounts WHERE aid = $1;

-- name: tpcb.teller_update
UPDATE pgbench_tellers SET tbalance = tbalance + $1 WHERE tid = $2;

-- name: tpcb.branch_update
UPDATE pgbench_branches SET bbalance = bbalance + $1 WHERE bid = $2;

-- name: tpcb.history_insert
INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES ($1, $2, $3, $4, CAST(CURRENT_TIMESTAMP AS TIMESTAMP));
