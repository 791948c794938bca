-- TPC-C tables for DuckDB (docs/tpcc.md part 3), created before the load.
-- Keys and secondary indexes come after the load, in indexes.sql.
--
-- Types as PostgreSQL's tables.sql has them (HammerDB's): ids INTEGER
-- (SMALLINT for district and line numbers), money and rates DECIMAL(p,s)
-- with the spec's precision (exact: the consistency checks hold to the
-- cent), fixed and variable text VARCHAR (DuckDB's CHAR is VARCHAR),
-- dates TIMESTAMP (UTC).

CREATE TABLE warehouse (
    w_id       INTEGER       NOT NULL,
    w_name     VARCHAR(10)   NOT NULL,
    w_street_1 VARCHAR(20)   NOT NULL,
    w_street_2 VARCHAR(20)   NOT NULL,
    w_city     VARCHAR(20)   NOT NULL,
    w_state    CHAR(2)       NOT NULL,
    w_zip      CHAR(9)       NOT NULL,
    w_tax      DECIMAL(4,4)  NOT NULL,
    w_ytd      DECIMAL(16,2) NOT NULL
);

CREATE TABLE district (
    d_id        SMALLINT      NOT NULL,
    d_w_id      INTEGER       NOT NULL,
    d_name      VARCHAR(10)   NOT NULL,
    d_street_1  VARCHAR(20)   NOT NULL,
    d_street_2  VARCHAR(20)   NOT NULL,
    d_city      VARCHAR(20)   NOT NULL,
    d_state     CHAR(2)       NOT NULL,
    d_zip       CHAR(9)       NOT NULL,
    d_tax       DECIMAL(4,4)  NOT NULL,
    d_ytd       DECIMAL(16,2) NOT NULL,
    d_next_o_id INTEGER       NOT NULL
);

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
    c_since        TIMESTAMP                NOT NULL,
    c_credit       CHAR(2)                  NOT NULL,
    c_credit_lim   DECIMAL(12,2)            NOT NULL,
    c_discount     DECIMAL(4,4)             NOT NULL,
    c_balance      DECIMAL(12,2)            NOT NULL,
    c_ytd_payment  DECIMAL(12,2)            NOT NULL,
    c_payment_cnt  INTEGER                  NOT NULL,
    c_delivery_cnt INTEGER                  NOT NULL,
    c_data         VARCHAR(500)             NOT NULL
);

-- No primary key (§1.3 comment).
CREATE TABLE history (
    h_c_id   INTEGER                  NOT NULL,
    h_c_d_id SMALLINT                 NOT NULL,
    h_c_w_id INTEGER                  NOT NULL,
    h_d_id   SMALLINT                 NOT NULL,
    h_w_id   INTEGER                  NOT NULL,
    h_date   TIMESTAMP                NOT NULL,
    h_amount DECIMAL(6,2)             NOT NULL,
    h_data   VARCHAR(24)              NOT NULL
);

CREATE TABLE orders (
    o_id         INTEGER                  NOT NULL,
    o_d_id       SMALLINT                 NOT NULL,
    o_w_id       INTEGER                  NOT NULL,
    o_c_id       INTEGER                  NOT NULL,
    o_entry_d    TIMESTAMP                NOT NULL,
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
    ol_delivery_d  TIMESTAMP               ,
    ol_quantity    SMALLINT                 NOT NULL,
    ol_amount      DECIMAL(6,2)             NOT NULL,
    ol_dist_info   CHAR(24)                 NOT NULL
);

CREATE TABLE item (
    i_id    INTEGER      NOT NULL,
    i_im_id INTEGER      NOT NULL,
    i_name  VARCHAR(24)  NOT NULL,
    i_price DECIMAL(5,2) NOT NULL,
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
);

-- What a run needs to know about the build (workload, version, warehouses,
-- seed, c_load). Loaded last: its rows mark a complete build.
CREATE TABLE sledge_meta (
    name  TEXT NOT NULL PRIMARY KEY,
    value TEXT NOT NULL
);
