-- Keys and secondary indexes for DuckDB (docs/tpcc.md 3.10), created after
-- the load: DuckDB's ART indexes build faster over loaded rows than row by
-- row. The keys are unique indexes, so a duplicate key is an error as on
-- the other databases. DuckDB plans the composite-key lookups as filtered
-- scans (EXPLAIN: SEQ_SCAN, pruned by the row groups' min/max), not as
-- index scans: docs/duckdb.md.
CREATE UNIQUE INDEX warehouse_pk ON warehouse (w_id);
CREATE UNIQUE INDEX district_pk ON district (d_w_id, d_id);
CREATE UNIQUE INDEX customer_pk ON customer (c_w_id, c_d_id, c_id);
CREATE UNIQUE INDEX orders_pk ON orders (o_w_id, o_d_id, o_id);
CREATE UNIQUE INDEX new_order_pk ON new_order (no_w_id, no_d_id, no_o_id);
CREATE UNIQUE INDEX order_line_pk ON order_line (ol_w_id, ol_d_id, ol_o_id, ol_number);
CREATE UNIQUE INDEX item_pk ON item (i_id);
CREATE UNIQUE INDEX stock_pk ON stock (s_w_id, s_i_id);

-- Payment and Order-Status by last name (60%): the customers of a district
-- with one c_last, in c_first order.
CREATE INDEX customer_i2 ON customer (c_w_id, c_d_id, c_last, c_first);

-- Order-Status: the newest order of a customer.
CREATE INDEX orders_i2 ON orders (o_w_id, o_d_id, o_c_id, o_id);

ANALYZE;
