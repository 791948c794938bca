-- TPC-C tables for SQLite (docs/tpcc.md part 3), created before the load.
-- Secondary indexes come after the load, in indexes.sql.
--
-- Types. Ids and counts are INTEGER. Text is TEXT. Dates are TEXT holding
-- 'YYYY-MM-DD HH:MM:SS' (UTC), the shape of CURRENT_TIMESTAMP: SQLite has no
-- date type, and both Go drivers would parse a column declared TIMESTAMP
-- into time.Time on every read, which costs about a tenth of a point select.
-- Money and rates are NUMERIC: SQLite has no exact decimal type; NUMERIC
-- affinity stores a whole value as an INTEGER and a fractional one as an
-- 8-byte REAL, so sums may carry a float error far below a cent. The
-- consistency checks (checks.sql) therefore compare money to the cent.
--
-- Storage. A table with an INTEGER PRIMARY KEY (warehouse, item) keeps its
-- rows in a b-tree keyed by that id. Tables with a composite key and small
-- rows are WITHOUT ROWID: the rows live in the primary-key b-tree itself
-- (a clustered index), so a lookup by key is one b-tree search instead of
-- two and there is no separate key index to maintain. SQLite advises it
-- for rows under about 1/20 of a page; customer (~650 bytes) and stock
-- (~300 bytes) are larger, so they stay rowid tables with a key index.
-- history has no primary key (§1.3): its rowid is enough.

CREATE TABLE warehouse (
    w_id       INTEGER NOT NULL PRIMARY KEY,
    w_name     TEXT    NOT NULL,
    w_street_1 TEXT    NOT NULL,
    w_street_2 TEXT    NOT NULL,
    w_city     TEXT    NOT NULL,
    w_state    TEXT    NOT NULL,
    w_zip      TEXT    NOT NULL,
    w_tax      NUMERIC NOT NULL,
    w_ytd      NUMERIC NOT NULL
);

CREATE TABLE district (
    d_id        INTEGER NOT NULL,
    d_w_id      INTEGER NOT NULL,
    d_name      TEXT    NOT NULL,
    d_street_1  TEXT    NOT NULL,
    d_street_2  TEXT    NOT NULL,
    d_city      TEXT    NOT NULL,
    d_state     TEXT    NOT NULL,
    d_zip       TEXT    NOT NULL,
    d_tax       NUMERIC NOT NULL,
    d_ytd       NUMERIC NOT NULL,
    d_next_o_id INTEGER NOT NULL,
    PRIMARY KEY (d_w_id, d_id)
) WITHOUT ROWID;

CREATE TABLE customer (
    c_id           INTEGER   NOT NULL,
    c_d_id         INTEGER   NOT NULL,
    c_w_id         INTEGER   NOT NULL,
    c_first        TEXT      NOT NULL,
    c_middle       TEXT      NOT NULL,
    c_last         TEXT      NOT NULL,
    c_street_1     TEXT      NOT NULL,
    c_street_2     TEXT      NOT NULL,
    c_city         TEXT      NOT NULL,
    c_state        TEXT      NOT NULL,
    c_zip          TEXT      NOT NULL,
    c_phone        TEXT      NOT NULL,
    c_since        TEXT      NOT NULL,
    c_credit       TEXT      NOT NULL,
    c_credit_lim   NUMERIC   NOT NULL,
    c_discount     NUMERIC   NOT NULL,
    c_balance      NUMERIC   NOT NULL,
    c_ytd_payment  NUMERIC   NOT NULL,
    c_payment_cnt  INTEGER   NOT NULL,
    c_delivery_cnt INTEGER   NOT NULL,
    c_data         TEXT      NOT NULL,
    PRIMARY KEY (c_w_id, c_d_id, c_id)
);

CREATE TABLE history (
    h_c_id   INTEGER   NOT NULL,
    h_c_d_id INTEGER   NOT NULL,
    h_c_w_id INTEGER   NOT NULL,
    h_d_id   INTEGER   NOT NULL,
    h_w_id   INTEGER   NOT NULL,
    h_date   TEXT      NOT NULL,
    h_amount NUMERIC   NOT NULL,
    h_data   TEXT      NOT NULL
);

CREATE TABLE orders (
    o_id         INTEGER   NOT NULL,
    o_d_id       INTEGER   NOT NULL,
    o_w_id       INTEGER   NOT NULL,
    o_c_id       INTEGER   NOT NULL,
    o_entry_d    TEXT      NOT NULL,
    o_carrier_id INTEGER,
    o_ol_cnt     INTEGER   NOT NULL,
    o_all_local  INTEGER   NOT NULL,
    PRIMARY KEY (o_w_id, o_d_id, o_id)
) WITHOUT ROWID;

CREATE TABLE new_order (
    no_o_id INTEGER NOT NULL,
    no_d_id INTEGER NOT NULL,
    no_w_id INTEGER NOT NULL,
    PRIMARY KEY (no_w_id, no_d_id, no_o_id)
) WITHOUT ROWID;

CREATE TABLE order_line (
    ol_o_id        INTEGER   NOT NULL,
    ol_d_id        INTEGER   NOT NULL,
    ol_w_id        INTEGER   NOT NULL,
    ol_number      INTEGER   NOT NULL,
    ol_i_id        INTEGER   NOT NULL,
    ol_supply_w_id INTEGER   NOT NULL,
    ol_delivery_d  TEXT     ,
    ol_quantity    INTEGER   NOT NULL,
    ol_amount      NUMERIC   NOT NULL,
    ol_dist_info   TEXT      NOT NULL,
    PRIMARY KEY (ol_w_id, ol_d_id, ol_o_id, ol_number)
) WITHOUT ROWID;

CREATE TABLE item (
    i_id    INTEGER NOT NULL PRIMARY KEY,
    i_im_id INTEGER NOT NULL,
    i_name  TEXT    NOT NULL,
    i_price NUMERIC NOT NULL,
    i_data  TEXT    NOT NULL
);

CREATE TABLE stock (
    s_i_id       INTEGER NOT NULL,
    s_w_id       INTEGER NOT NULL,
    s_quantity   INTEGER NOT NULL,
    s_dist_01    TEXT    NOT NULL,
    s_dist_02    TEXT    NOT NULL,
    s_dist_03    TEXT    NOT NULL,
    s_dist_04    TEXT    NOT NULL,
    s_dist_05    TEXT    NOT NULL,
    s_dist_06    TEXT    NOT NULL,
    s_dist_07    TEXT    NOT NULL,
    s_dist_08    TEXT    NOT NULL,
    s_dist_09    TEXT    NOT NULL,
    s_dist_10    TEXT    NOT NULL,
    s_ytd        INTEGER NOT NULL,
    s_order_cnt  INTEGER NOT NULL,
    s_remote_cnt INTEGER NOT NULL,
    s_data       TEXT    NOT NULL,
    PRIMARY KEY (s_w_id, s_i_id)
);

-- What a run needs to know about the build (workload, version, warehouses,
-- seed, c_load). Loaded last: its rows mark a complete build.
CREATE TABLE sledge_meta (
    name  TEXT NOT NULL PRIMARY KEY,
    value TEXT NOT NULL
);
