-- Drops pgbench's tables. pgbench_branches first, so an interrupted drop
-- never leaves a schema that looks complete.
DROP TABLE IF EXISTS pgbench_branches;
DROP TABLE IF EXISTS pgbench_accounts;
DROP TABLE IF EXISTS pgbench_tellers;
DROP TABLE IF EXISTS pgbench_history;
