-- TPC-C tables for PostgreSQL (docs/tpcc.md part 3), created before the
-- load. Primary keys and secondary indexes come after the load, in
-- indexes.sql: building an index over loaded rows is much faster than
-- maintaining it row by row during COPY.
--
-- Types as HammerDB uses them: ids INTEGER (SMALLINT for district and line
-- numbers), money and rates NUMERIC(p,s) with the spec's precision (w_ytd
-- and d_ytd wider: they grow by every payment), dates TIMESTAMP WITH TIME
-- ZONE, fixed text CHAR(n), variable text VARCHAR(n).
--
-- fillfactor: the tables the transactions update keep free space in each
-- page, so an update can write the new row version into the same page. None
-- of the updated columns is indexed, so such an update is HOT (heap-only):
-- no index entry is written and the page is pruned without VACUUM.
-- warehouse and district are tiny and updated by every Payment and
-- New-Order: fillfactor 10 also spreads their rows over more pages, so
-- virtual users of different districts contend less on one page's buffer
-- lock. customer and stock are large: 80 leaves room for HOT updates
-- (customer's c_data grows with bad-credit payments) at 25% more space.

CREATE TABLE warehouse (
    w_id       INTEGER       NOT NULL,
    w_name     VARCHAR(10)   NOT NULL,
    w_street_1 VARCHAR(20)   NOT NULL,
    w_street_2 VARCHAR(20)   NOT NULL,
    w_city     VARCHAR(20)   NOT NULL,
    w_state    CHAR(2)       NOT NULL,
    w_zip      CHAR(9)       NOT NULL,
    w_tax      NUMERIC(4,4)  NOT NULL,
    w_ytd      NUMERIC(16,2) NOT NULL
) WITH (fillfactor = 10);

CREATE TABLE district (
    d_id        SMALLINT      NOT NULL,
    d_w_id      INTEGER       NOT NULL,
    d_name      VARCHAR(10)   NOT NULL,
    d_street_1  VARCHAR(20)   NOT NULL,
    d_street_2  VARCHAR(20)   NOT NULL,
    d_city      VARCHAR(20)   NOT NULL,
    d_state     CHAR(2)       NOT NULL,
    d_zip       CHAR(9)       NOT NULL,
    d_tax       NUMERIC(4,4)  NOT NULL,
    d_ytd       NUMERIC(16,2) NOT NULL,
    d_next_o_id INTEGER       NOT NULL
) WITH (fillfactor = 10);

CREATE TABLE customer (
    c_id           INTEGER                  NOT NULL,
    c_d_id         SMALLINT                 NOT NULL,
    c_w_id         INTEGER                  NOT NULL,
    c_first        VARCHAR(16)              NOT NULL,
    c_middle       CHAR(2)                  NOT NULL,
    c_last         VARCHAR(16)              NOT NULL,
    c_street_1     VARCHAR(20)              NOT NULL,
    c_street_2     VARCHAR(20)              NOT NULL,
    c_city         VARCHAR(20)              NOT NULL,
    c_state        CHAR(2)                  NOT NULL,
    c_zip          CHAR(9)                  NOT NULL,
    c_phone        CHAR(16)                 NOT NULL,
    c_since        TIMESTAMP WITH TIME ZONE NOT NULL,
    c_credit       CHAR(2)                  NOT NULL,
    c_credit_lim   NUMERIC(12,2)            NOT NULL,
    c_discount     NUMERIC(4,4)             NOT NULL,
    c_balance      NUMERIC(12,2)            NOT NULL,
    c_ytd_payment  NUMERIC(12,2)            NOT NULL,
    c_payment_cnt  INTEGER                  NOT NULL,
    c_delivery_cnt INTEGER                  NOT NULL,
    c_data         VARCHAR(500)             NOT NULL
) WITH (fillfactor = 80);

-- No primary key (§1.3 comment).
CREATE TABLE history (
    h_c_id   INTEGER                  NOT NULL,
    h_c_d_id SMALLINT                 NOT NULL,
    h_c_w_id INTEGER                  NOT NULL,
    h_d_id   SMALLINT                 NOT NULL,
    h_w_id   INTEGER                  NOT NULL,
    h_date   TIMESTAMP WITH TIME ZONE NOT NULL,
    h_amount NUMERIC(6,2)             NOT NULL,
    h_data   VARCHAR(24)              NOT NULL
);

CREATE TABLE orders (
    o_id         INTEGER                  NOT NULL,
    o_d_id       SMALLINT                 NOT NULL,
    o_w_id       INTEGER                  NOT NULL,
    o_c_id       INTEGER                  NOT NULL,
    o_entry_d    TIMESTAMP WITH TIME ZONE NOT NULL,
    o_carrier_id SMALLINT,
    o_ol_cnt     SMALLINT                 NOT NULL,
    o_all_local  SMALLINT                 NOT NULL
);

CREATE TABLE new_order (
    no_o_id INTEGER  NOT NULL,
    no_d_id SMALLINT NOT NULL,
    no_w_id INTEGER  NOT NULL
);

CREATE TABLE order_line (
    ol_o_id        INTEGER                  NOT NULL,
    ol_d_id        SMALLINT                 NOT NULL,
    ol_w_id        INTEGER                  NOT NULL,
    ol_number      SMALLINT                 NOT NULL,
    ol_i_id        INTEGER                  NOT NULL,
    ol_supply_w_id INTEGER                  NOT NULL,
    ol_delivery_d  TIMESTAMP WITH TIME ZONE,
    ol_quantity    SMALLINT                 NOT NULL,
    ol_amount      NUMERIC(6,2)             NOT NULL,
    ol_dist_info   CHAR(24)                 NOT NULL
);

CREATE TABLE item (
    i_id    INTEGER      NOT NULL,
    i_im_id INTEGER      NOT NULL,
    i_name  VARCHAR(24)  NOT NULL,
    i_price NUMERIC(5,2) NOT NULL,
    i_data  VARCHAR(50)  NOT NULL
);

CREATE TABLE stock (
    s_i_id       INTEGER     NOT NULL,
    s_w_id       INTEGER     NOT NULL,
    s_quantity   SMALLINT    NOT NULL,
    s_dist_01    CHAR(24)    NOT NULL,
    s_dist_02    CHAR(24)    NOT NULL,
    s_dist_03    CHAR(24)    NOT NULL,
    s_dist_04    CHAR(24)    NOT NULL,
    s_dist_05    CHAR(24)    NOT NULL,
    s_dist_06    CHAR(24)    NOT NULL,
    s_dist_07    CHAR(24)    NOT NULL,
    s_dist_08    CHAR(24)    NOT NULL,
    s_dist_09    CHAR(24)    NOT NULL,
    s_dist_10    CHAR(24)    NOT NULL,
    s_ytd        INTEGER     NOT NULL,
    s_order_cnt  INTEGER     NOT NULL,
    s_remote_cnt INTEGER     NOT NULL,
    s_data       VARCHAR(50) NOT NULL
) WITH (fillfactor = 80);

-- What a run needs to know about the build (workload, version, warehouses,
-- seed, c_load). Loaded last: its rows mark a complete build.
CREATE TABLE sledge_meta (
    name  TEXT NOT NULL PRIMARY KEY,
    value TEXT NOT NULL
);
