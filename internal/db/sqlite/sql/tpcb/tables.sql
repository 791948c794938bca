-- pgbench's four tables for SQLite (docs/tpcb.md part 1), created before
-- the load. pgbench's DDL with SQLite's nearest types: int is INTEGER,
-- char(n) keeps its name (TEXT affinity; SQLite neither pads nor cuts, so
-- the build sends the accounts' filler already blank-padded to 84
-- characters, the value PostgreSQL stores for pgbench's ''), and mtime is
-- TEXT holding CURRENT_TIMESTAMP's 'YYYY-MM-DD HH:MM:SS' (UTC): both Go
-- drivers would parse a column declared TIMESTAMP on every read.
--
-- Primary keys. pgbench adds them after the load (ALTER TABLE … ADD
-- PRIMARY KEY, step p); SQLite cannot add a primary key to a table, and
-- the key sledge wants here is better than one it could add: an INTEGER
-- PRIMARY KEY is the table's rowid, so the rows live in the key's own
-- b-tree and a lookup by aid is one b-tree search with no separate index
-- (a unique index added later would be a second b-tree to search and to
-- keep up). The build sends rows in key order, so each insert appends.
-- So there is no indexes.sql. pgbench_history has no key, as in pgbench.
--
-- pgbench_branches is created last and loaded last: the rows of
-- pgbench_branches mark a finished build.

CREATE TABLE pgbench_history (
    tid    INTEGER,
    bid    INTEGER,
    aid    INTEGER,
    delta  INTEGER,
    mtime  TEXT,
    filler CHAR(22)
);

CREATE TABLE pgbench_tellers (
    tid      INTEGER NOT NULL PRIMARY KEY,
    bid      INTEGER,
    tbalance INTEGER,
    filler   CHAR(84)
);

CREATE TABLE pgbench_accounts (
    aid      INTEGER NOT NULL PRIMARY KEY,
    bid      INTEGER,
    abalance INTEGER,
    filler   CHAR(84)
);

CREATE TABLE pgbench_branches (
    bid      INTEGER NOT NULL PRIMARY KEY,
    bbalance INTEGER,
    filler   CHAR(88)
);
