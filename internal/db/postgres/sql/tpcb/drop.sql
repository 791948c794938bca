-- Drops pgbench's tables and the tpcb routines (both kinds).
-- pgbench_branches first, so an interrupted drop never leaves a schema
-- that looks complete.
DROP TABLE IF EXISTS pgbench_branches;
DROP PROCEDURE IF EXISTS pgbench_tpcb_like(int, int, int, int, int);
DROP PROCEDURE IF EXISTS pgbench_simple_update(int, int, int, int, int);
DROP FUNCTION IF EXISTS pgbench_tpcb_like(int, int, int, int);
DROP FUNCTION IF EXISTS pgbench_simple_update(int, int, int, int);
DROP TABLE IF EXISTS pgbench_accounts;
DROP TABLE IF EXISTS pgbench_tellers;
DROP TABLE IF EXISTS pgbench_history;
