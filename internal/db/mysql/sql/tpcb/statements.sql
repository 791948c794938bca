-- pgbench's builtin statements for MariaDB and MySQL 8. The contract
-- (names, argument order, result columns) is documented in
-- internal/workload/tpcb/stmts.go. Arguments are positional ? markers, in
-- the contract's order. The same text is prepared once per connection
-- (--mode prepared) or sent with the values written in by the driver
-- (--mode client, procedure). Isolation is the session's (REPEATABLE READ
-- unless the URL says otherwise, docs/databases.md).

-- name: tpcb.scale
SELECT (SELECT COUNT(*) FROM pgbench_branches), (SELECT COUNT(*) FROM pgbench_tellers);

-- name: schema.built
-- For procedure mode's check at connect time (conn.go): a built schema has
-- branches. Fails with 1146 (read as "not built") without the table.
SELECT COUNT(*) FROM (SELECT 1 FROM pgbench_branches LIMIT 1) AS b;

-- name: tpcb.account_update
UPDATE pgbench_accounts SET abalance = abalance + ? WHERE aid = ?;

-- name: tpcb.account_select
SELECT abalance FROM pgbench_accounts WHERE aid = ?;

-- name: tpcb.teller_update
UPDATE pgbench_tellers SET tbalance = tbalance + ? WHERE tid = ?;

-- name: tpcb.branch_update
UPDATE pgbench_branches SET bbalance = bbalance + ? WHERE bid = ?;

-- name: tpcb.history_insert
INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (?, ?, ?, ?, CURRENT_TIMESTAMP);

-- Procedure mode: one CALL per transaction (procedures.sql); the balance
-- is a one-row result set.

-- name: tpcb-like.call
CALL pgbench_tpcb_like(?, ?, ?, ?);

-- name: simple-update.call
CALL pgbench_simple_update(?, ?, ?, ?);
