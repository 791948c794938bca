-- Primary keys (HammerDB's names, <table>_i1) and secondary indexes
-- (docs/tpcc.md 3.10), created after the load, then VACUUM ANALYZE, as
-- pgbench -i does: it sets the hint bits and the visibility map of the
-- loaded pages and gives the planner statistics, so the first run neither
-- pays for them nor shares the server with autovacuum doing it (whose
-- transactions the database's TPM would count). maintenance_work_mem is for this script's session only: index
-- builds sort in memory instead of in temporary files.
SET maintenance_work_mem = '512MB';

ALTER TABLE warehouse  ADD CONSTRAINT warehouse_i1  PRIMARY KEY (w_id);
ALTER TABLE district   ADD CONSTRAINT district_i1   PRIMARY KEY (d_w_id, d_id);
ALTER TABLE customer   ADD CONSTRAINT customer_i1   PRIMARY KEY (c_w_id, c_d_id, c_id);
ALTER TABLE orders     ADD CONSTRAINT orders_i1     PRIMARY KEY (o_w_id, o_d_id, o_id);
ALTER TABLE new_order  ADD CONSTRAINT new_order_i1  PRIMARY KEY (no_w_id, no_d_id, no_o_id);
ALTER TABLE order_line ADD CONSTRAINT order_line_i1 PRIMARY KEY (ol_w_id, ol_d_id, ol_o_id, ol_number);
ALTER TABLE item       ADD CONSTRAINT item_i1       PRIMARY KEY (i_id);
ALTER TABLE stock      ADD CONSTRAINT stock_i1      PRIMARY KEY (s_w_id, s_i_id);

-- Payment and Order-Status by last name (60%): a district's customers with
-- one c_last in c_first order; c_id makes it unique, as HammerDB's.
CREATE UNIQUE INDEX customer_i2 ON customer (c_w_id, c_d_id, c_last, c_first, c_id);

-- Order-Status: the newest order of a customer.
CREATE UNIQUE INDEX orders_i2 ON orders (o_w_id, o_d_id, o_c_id, o_id);

VACUUM ANALYZE warehouse, district, customer, history, orders, new_order, order_line, item, stock;
