-- TPC-C tables for MariaDB and MySQL 8 (docs/tpcc.md part 3), created
-- before the load. Secondary indexes come after the load, in indexes.sql.
--
-- Storage. InnoDB keeps every table's rows in its primary-key b-tree (a
-- clustered index), so the primary key must be declared here, and the load
-- sends rows in key order so each insert appends. history has no primary
-- key in the spec (§1.3): InnoDB then adds a hidden 6-byte row id as its
-- clustered key (HammerDB's mysql_history_pk=false, the default).
--
-- Types (§1.3.1). Ids are INT (SMALLINT for district and line numbers),
-- money and rates exact DECIMAL (never INT for ol_amount, HammerDB's bug),
-- dates DATETIME. Counters that the spec sizes at 4 digits are INT: a long
-- run would overflow SMALLINT. Text is latin1 with a binary collation:
-- the data is ASCII, a byte per character keeps rows small, and ORDER BY
-- c_first sorts by byte as every other database sledge runs on does.

CREATE TABLE warehouse (
    w_id       INT            NOT NULL,
    w_name     VARCHAR(10)    NOT NULL,
    w_street_1 VARCHAR(20)    NOT NULL,
    w_street_2 VARCHAR(20)    NOT NULL,
    w_city     VARCHAR(20)    NOT NULL,
    w_state    CHAR(2)        NOT NULL,
    w_zip      CHAR(9)        NOT NULL,
    w_tax      DECIMAL(4,4)   NOT NULL,
    w_ytd      DECIMAL(12,2)  NOT NULL,
    PRIMARY KEY (w_id)
) ENGINE=InnoDB DEFAULT CHARSET=latin1 COLLATE=latin1_bin;

CREATE TABLE district (
    d_id        SMALLINT      NOT NULL,
    d_w_id      INT           NOT NULL,
    d_name      VARCHAR(10)   NOT NULL,
    d_street_1  VARCHAR(20)   NOT NULL,
    d_street_2  VARCHAR(20)   NOT NULL,
    d_city      VARCHAR(20)   NOT NULL,
    d_state     CHAR(2)       NOT NULL,
    d_zip       CHAR(9)       NOT NULL,
    d_tax       DECIMAL(4,4)  NOT NULL,
    d_ytd       DECIMAL(12,2) NOT NULL,
    d_next_o_id INT           NOT NULL,
    PRIMARY KEY (d_w_id, d_id)
) ENGINE=InnoDB DEFAULT CHARSET=latin1 COLLATE=latin1_bin;

CREATE TABLE customer (
    c_id           INT           NOT NULL,
    c_d_id         SMALLINT      NOT NULL,
    c_w_id         INT           NOT NULL,
    c_first        VARCHAR(16)   NOT NULL,
    c_middle       CHAR(2)       NOT NULL,
    c_last         VARCHAR(16)   NOT NULL,
    c_street_1     VARCHAR(20)   NOT NULL,
    c_street_2     VARCHAR(20)   NOT NULL,
    c_city         VARCHAR(20)   NOT NULL,
    c_state        CHAR(2)       NOT NULL,
    c_zip          CHAR(9)       NOT NULL,
    c_phone        CHAR(16)      NOT NULL,
    c_since        DATETIME      NOT NULL,
    c_credit       CHAR(2)       NOT NULL,
    c_credit_lim   DECIMAL(12,2) NOT NULL,
    c_discount     DECIMAL(4,4)  NOT NULL,
    c_balance      DECIMAL(12,2) NOT NULL,
    c_ytd_payment  DECIMAL(12,2) NOT NULL,
    c_payment_cnt  INT           NOT NULL,
    c_delivery_cnt INT           NOT NULL,
    c_data         VARCHAR(500)  NOT NULL,
    PRIMARY KEY (c_w_id, c_d_id, c_id)
) ENGINE=InnoDB DEFAULT CHARSET=latin1 COLLATE=latin1_bin;

CREATE TABLE history (
    h_c_id   INT          NOT NULL,
    h_c_d_id SMALLINT     NOT NULL,
    h_c_w_id INT          NOT NULL,
    h_d_id   SMALLINT     NOT NULL,
    h_w_id   INT          NOT NULL,
    h_date   DATETIME     NOT NULL,
    h_amount DECIMAL(6,2) NOT NULL,
    h_data   VARCHAR(24)  NOT NULL
) ENGINE=InnoDB DEFAULT CHARSET=latin1 COLLATE=latin1_bin;

CREATE TABLE orders (
    o_id         INT      NOT NULL,
    o_d_id       SMALLINT NOT NULL,
    o_w_id       INT      NOT NULL,
    o_c_id       INT      NOT NULL,
    o_entry_d    DATETIME NOT NULL,
    o_carrier_id SMALLINT,
    o_ol_cnt     SMALLINT NOT NULL,
    o_all_local  SMALLINT NOT NULL,
    PRIMARY KEY (o_w_id, o_d_id, o_id)
) ENGINE=InnoDB DEFAULT CHARSET=latin1 COLLATE=latin1_bin;

CREATE TABLE new_order (
    no_o_id INT      NOT NULL,
    no_d_id SMALLINT NOT NULL,
    no_w_id INT      NOT NULL,
    PRIMARY KEY (no_w_id, no_d_id, no_o_id)
) ENGINE=InnoDB DEFAULT CHARSET=latin1 COLLATE=latin1_bin;

CREATE TABLE order_line (
    ol_o_id        INT          NOT NULL,
    ol_d_id        SMALLINT     NOT NULL,
    ol_w_id        INT          NOT NULL,
    ol_number      SMALLINT     NOT NULL,
    ol_i_id        INT          NOT NULL,
    ol_supply_w_id INT          NOT NULL,
    ol_delivery_d  DATETIME,
    ol_quantity    SMALLINT     NOT NULL,
    ol_amount      DECIMAL(6,2) NOT NULL,
    ol_dist_info   CHAR(24)     NOT NULL,
    PRIMARY KEY (ol_w_id, ol_d_id, ol_o_id, ol_number)
) ENGINE=InnoDB DEFAULT CHARSET=latin1 COLLATE=latin1_bin;

CREATE TABLE item (
    i_id    INT          NOT NULL,
    i_im_id INT          NOT NULL,
    i_name  VARCHAR(24)  NOT NULL,
    i_price DECIMAL(5,2) NOT NULL,
    i_data  VARCHAR(50)  NOT NULL,
    PRIMARY KEY (i_id)
) ENGINE=InnoDB DEFAULT CHARSET=latin1 COLLATE=latin1_bin;

CREATE TABLE stock (
    s_i_id       INT         NOT NULL,
    s_w_id       INT         NOT NULL,
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
    s_ytd        INT         NOT NULL,
    s_order_cnt  INT         NOT NULL,
    s_remote_cnt INT         NOT NULL,
    s_data       VARCHAR(50) NOT NULL,
    PRIMARY KEY (s_w_id, s_i_id)
) ENGINE=InnoDB DEFAULT CHARSET=latin1 COLLATE=latin1_bin;

-- What a run needs to know about the build (workload, version, warehouses,
-- seed, c_load). Loaded last: its rows mark a complete build.
CREATE TABLE sledge_meta (
    name  VARCHAR(64)  NOT NULL,
    value VARCHAR(255) NOT NULL,
    PRIMARY KEY (name)
) ENGINE=InnoDB DEFAULT CHARSET=latin1 COLLATE=latin1_bin;
