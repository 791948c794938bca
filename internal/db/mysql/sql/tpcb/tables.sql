-- pgbench's four tables for MariaDB and MySQL 8 (docs/tpcb.md part 1),
-- created before the load, with the nearest types: int is INT, char(n)
-- CHAR(n) (InnoDB stores it blank-padded like PostgreSQL; latin1 with a
-- binary collation as the tpcc tables), timestamp DATETIME (a TIMESTAMP
-- column could get automatic defaults and ends in 2038).
--
-- The primary keys come after the load, in indexes.sql, as pgbench's
-- step p. pgbench_branches is loaded last: its rows mark a finished build.

CREATE TABLE pgbench_history (
    tid    INT,
    bid    INT,
    aid    INT,
    delta  INT,
    mtime  DATETIME,
    filler CHAR(22)
) ENGINE=InnoDB DEFAULT CHARSET=latin1 COLLATE=latin1_bin;

CREATE TABLE pgbench_tellers (
    tid      INT NOT NULL,
    bid      INT,
    tbalance INT,
    filler   CHAR(84)
) ENGINE=InnoDB DEFAULT CHARSET=latin1 COLLATE=latin1_bin;

CREATE TABLE pgbench_accounts (
    aid      INT NOT NULL,
    bid      INT,
    abalance INT,
    filler   CHAR(84)
) ENGINE=InnoDB DEFAULT CHARSET=latin1 COLLATE=latin1_bin;

CREATE TABLE pgbench_branches (
    bid      INT NOT NULL,
    bbalance INT,
    filler   CHAR(88)
) ENGINE=InnoDB DEFAULT CHARSET=latin1 COLLATE=latin1_bin;
