-- Drops pgbench's tables and the tpcb procedures. pgbench_branches first,
-- so an interrupted drop never leaves a schema that looks complete.
DROP TABLE IF EXISTS pgbench_branches;
DROP PROCEDURE IF EXISTS pgbench_tpcb_like;
DROP PROCEDURE IF EXISTS pgbench_simple_update;
DROP TABLE IF EXISTS pgbench_accounts;
DROP TABLE IF EXISTS pgbench_tellers;
DROP TABLE IF EXISTS pgbench_history;
