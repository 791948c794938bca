-- After the load: the keys, under pgbench's names, as unique indexes
-- (DuckDB's ART indexes; building one over loaded rows is faster than
-- keeping it up row by row), then the statistics.
CREATE UNIQUE INDEX pgbench_branches_pkey ON pgbench_branches (bid);
CREATE UNIQUE INDEX pgbench_tellers_pkey ON pgbench_tellers (tid);
CREATE UNIQUE INDEX pgbench_accounts_pkey ON pgbench_accounts (aid);
ANALYZE;
