-- After the load, in pgbench -i's default order (steps v then p): VACUUM
-- ANALYZE the four tables, then add the primary keys under pgbench's
-- names (<table>_pkey).
--
-- VACUUM cannot run inside a transaction block. sledge runs each statement
-- of this file on its own, without arguments, so pgx sends it as a simple
-- query outside any BEGIN: the VACUUM works (a test checks that the tables
-- were vacuumed and analyzed). It sets the hint bits and the visibility
-- map of the freshly loaded pages, which pgbench gets from COPY FREEZE, and
-- gives the planner statistics.
--
-- maintenance_work_mem is for this script's session only: the key builds
-- sort in memory instead of in temporary files.
SET maintenance_work_mem = '512MB';

VACUUM ANALYZE pgbench_branches, pgbench_tellers, pgbench_accounts, pgbench_history;

ALTER TABLE pgbench_branches ADD PRIMARY KEY (bid);
ALTER TABLE pgbench_tellers ADD PRIMARY KEY (tid);
ALTER TABLE pgbench_accounts ADD PRIMARY KEY (aid);
