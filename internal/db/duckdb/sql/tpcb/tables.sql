-- pgbench's four tables for DuckDB (docs/tpcb.md part 1), created before
-- the load. pgbench's DDL with DuckDB's types: char(n) is VARCHAR in
-- DuckDB (no padding; the build sends the accounts' filler already
-- blank-padded to 84 characters, the value PostgreSQL stores for
-- pgbench's ''), mtime is TIMESTAMP (UTC). The keys come after the load,
-- in indexes.sql, as pgbench adds them. pgbench_history has no key.
--
-- pgbench_branches is created last and loaded last: the rows of
-- pgbench_branches mark a finished build.

CREATE TABLE pgbench_history (
    tid    INTEGER,
    bid    INTEGER,
    aid    INTEGER,
    delta  INTEGER,
    mtime  TIMESTAMP,
    filler VARCHAR(22)
);

CREATE TABLE pgbench_tellers (
    tid      INTEGER NOT NULL,
    bid      INTEGER,
    tbalance INTEGER,
    filler   VARCHAR(84)
);

CREATE TABLE pgbench_accounts (
    aid      INTEGER NOT NULL,
    bid      INTEGER,
    abalance INTEGER,
    filler   VARCHAR(84)
);

CREATE TABLE pgbench_branches (
    bid      INTEGER NOT NULL,
    bbalance INTEGER,
    filler   VARCHAR(88)
);
