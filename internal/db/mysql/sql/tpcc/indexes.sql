-- Secondary indexes (docs/tpcc.md 3.10), created after the load: InnoDB
-- builds an index over loaded rows by sorting them, much faster than
-- maintaining it row by row. Each also holds the primary key columns.

-- Payment and Order-Status by last name (60%): the customers of a district
-- with one c_last, in c_first order.
CREATE INDEX customer_i2 ON customer (c_w_id, c_d_id, c_last, c_first);

-- Order-Status: the newest order of a customer.
CREATE INDEX orders_i2 ON orders (o_w_id, o_d_id, o_c_id, o_id);
