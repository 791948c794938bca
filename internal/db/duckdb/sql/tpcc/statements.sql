-- TPC-C statements for DuckDB. The contract (names, argument order, result
-- columns) is documented in internal/workload/tpcc/stmts.go. Arguments are
-- $1..$n, each used once, in order of appearance.
--
-- DuckDB has no row locks and no SELECT … FOR UPDATE: its concurrency is
-- optimistic (MVCC), and of two transactions that write the same row the
-- second fails with a conflict, which sledge retries (workload.ErrRetry;
-- docs/duckdb.md). Dates come from the database clock: CURRENT_TIMESTAMP,
-- cast to the columns' TIMESTAMP (UTC).

-- name: meta.get
SELECT name, value FROM sledge_meta;

-- name: tpcc.nopm
SELECT coalesce(sum(d_next_o_id), 0) FROM district;

-- New-Order (§2.4.2.2)

-- name: neword.warehouse
SELECT w_tax FROM warehouse WHERE w_id = $1;

-- name: neword.district
SELECT d_tax, d_next_o_id FROM district WHERE d_w_id = $1 AND d_id = $2;

-- name: neword.district_update
UPDATE district SET d_next_o_id = d_next_o_id + 1 WHERE d_w_id = $1 AND d_id = $2;

-- name: neword.customer
SELECT c_discount, c_last, c_credit FROM customer WHERE c_w_id = $1 AND c_d_id = $2 AND c_id = $3;

-- name: neword.order
INSERT INTO orders (o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_carrier_id, o_ol_cnt, o_all_local)
VALUES ($1, $2, $3, $4, CAST(CURRENT_TIMESTAMP AS TIMESTAMP), NULL, $5, $6);

-- name: neword.new_order
INSERT INTO new_order (no_o_id, no_d_id, no_w_id) VALUES ($1, $2, $3);

-- name: neword.item
SELECT i_price, i_name, i_data FROM item WHERE i_id = $1;

-- name: neword.stock
SELECT s_quantity, s_data,
       CASE $1 WHEN 1 THEN s_dist_01 WHEN 2 THEN s_dist_02 WHEN 3 THEN s_dist_03 WHEN 4 THEN s_dist_04
               WHEN 5 THEN s_dist_05 WHEN 6 THEN s_dist_06 WHEN 7 THEN s_dist_07 WHEN 8 THEN s_dist_08
               WHEN 9 THEN s_dist_09 ELSE s_dist_10 END
FROM stock WHERE s_i_id = $2 AND s_w_id = $3;

-- name: neword.stock_update
UPDATE stock SET s_quantity = $1, s_ytd = s_ytd + $2, s_order_cnt = s_order_cnt + 1, s_remote_cnt = s_remote_cnt + $3
WHERE s_i_id = $4 AND s_w_id = $5;

-- name: neword.order_line
INSERT INTO order_line (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, ol_supply_w_id, ol_delivery_d,
                        ol_quantity, ol_amount, ol_dist_info)
VALUES ($1, $2, $3, $4, $5, $6, NULL, $7, $8, $9);

-- Payment (§2.5.2.2)

-- name: payment.warehouse_update
UPDATE warehouse SET w_ytd = w_ytd + $1 WHERE w_id = $2;

-- name: payment.warehouse
SELECT w_name, w_street_1, w_street_2, w_city, w_state, w_zip FROM warehouse WHERE w_id = $1;

-- name: payment.district_update
UPDATE district SET d_ytd = d_ytd + $1 WHERE d_w_id = $2 AND d_id = $3;

-- name: payment.district
SELECT d_name, d_street_1, d_street_2, d_city, d_state, d_zip FROM district WHERE d_w_id = $1 AND d_id = $2;

-- name: payment.customer_count
SELECT count(*) FROM customer WHERE c_w_id = $1 AND c_d_id = $2 AND c_last = $3;

-- name: payment.customer_by_name
SELECT c_id, c_first, c_middle, c_last, c_street_1, c_street_2, c_city, c_state, c_zip, c_phone,
       c_since, c_credit, c_credit_lim, c_discount, c_balance
FROM customer WHERE c_w_id = $1 AND c_d_id = $2 AND c_last = $3
ORDER BY c_first LIMIT 1 OFFSET $4;

-- name: payment.customer
SELECT c_id, c_first, c_middle, c_last, c_street_1, c_street_2, c_city, c_state, c_zip, c_phone,
       c_since, c_credit, c_credit_lim, c_discount, c_balance
FROM customer WHERE c_w_id = $1 AND c_d_id = $2 AND c_id = $3;

-- name: payment.customer_data
SELECT c_data FROM customer WHERE c_w_id = $1 AND c_d_id = $2 AND c_id = $3;

-- name: payment.customer_update
UPDATE customer SET c_balance = c_balance - $1, c_ytd_payment = c_ytd_payment + $2, c_payment_cnt = c_payment_cnt + 1
WHERE c_w_id = $3 AND c_d_id = $4 AND c_id = $5;

-- name: payment.customer_update_bc
UPDATE customer SET c_balance = c_balance - $1, c_ytd_payment = c_ytd_payment + $2, c_payment_cnt = c_payment_cnt + 1,
       c_data = $3
WHERE c_w_id = $4 AND c_d_id = $5 AND c_id = $6;

-- name: payment.history
INSERT INTO history (h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_w_id, h_date, h_amount, h_data)
VALUES ($1, $2, $3, $4, $5, CAST(CURRENT_TIMESTAMP AS TIMESTAMP), $6, $7);

-- Order-Status (§2.6.2.2)

-- name: ostat.customer
SELECT c_balance, c_first, c_middle, c_last FROM customer WHERE c_w_id = $1 AND c_d_id = $2 AND c_id = $3;

-- name: ostat.customer_count
SELECT count(*) FROM customer WHERE c_w_id = $1 AND c_d_id = $2 AND c_last = $3;

-- name: ostat.customer_by_name
SELECT c_id, c_balance, c_first, c_middle
FROM customer WHERE c_w_id = $1 AND c_d_id = $2 AND c_last = $3
ORDER BY c_first LIMIT 1 OFFSET $4;

-- name: ostat.order
SELECT o_id, o_entry_d, o_carrier_id FROM orders
WHERE o_w_id = $1 AND o_d_id = $2 AND o_c_id = $3
ORDER BY o_id DESC LIMIT 1;

-- name: ostat.order_lines
SELECT ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_delivery_d FROM order_line
WHERE ol_w_id = $1 AND ol_d_id = $2 AND ol_o_id = $3;

-- Delivery (§2.7.4.2), once per district

-- name: delivery.oldest
SELECT no_o_id FROM new_order WHERE no_w_id = $1 AND no_d_id = $2 ORDER BY no_o_id LIMIT 1;

-- name: delivery.delete
DELETE FROM new_order WHERE no_w_id = $1 AND no_d_id = $2 AND no_o_id = $3;

-- name: delivery.order
SELECT o_c_id FROM orders WHERE o_w_id = $1 AND o_d_id = $2 AND o_id = $3;

-- name: delivery.order_update
UPDATE orders SET o_carrier_id = $1 WHERE o_w_id = $2 AND o_d_id = $3 AND o_id = $4;

-- name: delivery.order_line_update
UPDATE order_line SET ol_delivery_d = CAST(CURRENT_TIMESTAMP AS TIMESTAMP) WHERE ol_w_id = $1 AND ol_d_id = $2 AND ol_o_id = $3;

-- name: delivery.order_line_sum
SELECT coalesce(sum(ol_amount), 0) FROM order_line WHERE ol_w_id = $1 AND ol_d_id = $2 AND ol_o_id = $3;

-- name: delivery.customer_update
UPDATE customer SET c_balance = c_balance + $1, c_delivery_cnt = c_delivery_cnt + 1
WHERE c_w_id = $2 AND c_d_id = $3 AND c_id = $4;

-- Stock-Level (§2.8.2.2)

-- name: slev.district
SELECT d_next_o_id FROM district WHERE d_w_id = $1 AND d_id = $2;

-- name: slev.count
SELECT count(DISTINCT s.s_i_id)
FROM order_line ol JOIN stock s ON s.s_w_id = ol.ol_w_id AND s.s_i_id = ol.ol_i_id
WHERE ol.ol_w_id = $1 AND ol.ol_d_id = $2 AND ol.ol_o_id >= $3 AND ol.ol_o_id < $4
  AND s.s_quantity < $5;


-- Batched mode (--mode batched): set-oriented statements, PostgreSQL's
-- without their row locks. A {{…}} group is sent repeated once per row,
-- its placeholders renumbered in order (internal/db/repeat.go); the file
-- numbers them as for one row. VALUES lists cast their parameters:
-- nothing else tells their types.

-- name: neword.header
SELECT w_tax, d_tax, d_next_o_id, c_discount, c_last, c_credit
FROM warehouse, district, customer
WHERE w_id = $1 AND d_w_id = w_id AND d_id = $2 AND c_w_id = d_w_id AND c_d_id = d_id AND c_id = $3;

-- name: neword.items
SELECT i_id, i_price, i_name, i_data FROM item WHERE i_id IN ({{$1}});

-- name: neword.stocks
SELECT s_i_id, s_w_id, s_quantity, s_data,
       CASE $1::INTEGER WHEN 1 THEN s_dist_01 WHEN 2 THEN s_dist_02 WHEN 3 THEN s_dist_03 WHEN 4 THEN s_dist_04
               WHEN 5 THEN s_dist_05 WHEN 6 THEN s_dist_06 WHEN 7 THEN s_dist_07 WHEN 8 THEN s_dist_08
               WHEN 9 THEN s_dist_09 ELSE s_dist_10 END
FROM stock WHERE (s_i_id, s_w_id) IN ({{($2, $3)}})
ORDER BY s_w_id, s_i_id;

-- name: neword.stocks_update
UPDATE stock SET s_quantity = v.qty, s_ytd = s_ytd + v.ytd, s_order_cnt = s_order_cnt + v.cnt,
       s_remote_cnt = s_remote_cnt + v.remote
FROM (VALUES {{($1::INTEGER, $2::INTEGER, $3::INTEGER, $4::INTEGER, $5::INTEGER, $6::INTEGER)}})
     AS v (i, w, qty, ytd, cnt, remote)
WHERE s_i_id = v.i AND s_w_id = v.w;

-- name: neword.order_lines
INSERT INTO order_line (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, ol_supply_w_id, ol_delivery_d,
                        ol_quantity, ol_amount, ol_dist_info)
VALUES {{($1, $2, $3, $4, $5, $6, NULL, $7, $8, $9)}};

-- name: payment.customer_wd
SELECT w_name, w_street_1, w_street_2, w_city, w_state, w_zip,
       d_name, d_street_1, d_street_2, d_city, d_state, d_zip,
       c_id, c_first, c_middle, c_last, c_street_1, c_street_2, c_city, c_state, c_zip, c_phone,
       c_since, c_credit, c_credit_lim, c_discount, c_balance, CASE WHEN c_credit = 'BC' THEN c_data END
FROM warehouse, district, customer
WHERE w_id = $1 AND d_w_id = w_id AND d_id = $2 AND c_w_id = $3 AND c_d_id = $4 AND c_id = $5;

-- name: payment.customers_wd_by_name
SELECT w_name, w_street_1, w_street_2, w_city, w_state, w_zip,
       d_name, d_street_1, d_street_2, d_city, d_state, d_zip,
       c_id, c_first, c_middle, c_last, c_street_1, c_street_2, c_city, c_state, c_zip, c_phone,
       c_since, c_credit, c_credit_lim, c_discount, c_balance, CASE WHEN c_credit = 'BC' THEN c_data END
FROM warehouse, district, customer
WHERE w_id = $1 AND d_w_id = w_id AND d_id = $2 AND c_w_id = $3 AND c_d_id = $4 AND c_last = $5
ORDER BY c_first, c_id;

-- name: ostat.customer_order
SELECT c_balance, c_first, c_middle, c_last, coalesce(o.o_id, 0), o.o_entry_d, o.o_carrier_id
FROM customer c LEFT JOIN orders o
  ON o.o_w_id = c.c_w_id AND o.o_d_id = c.c_d_id AND o.o_c_id = c.c_id
 AND o.o_id = (SELECT max(o2.o_id) FROM orders o2 WHERE o2.o_w_id = c.c_w_id AND o2.o_d_id = c.c_d_id AND o2.o_c_id = c.c_id)
WHERE c.c_w_id = $1 AND c.c_d_id = $2 AND c.c_id = $3;

-- name: ostat.customers_order_by_name
SELECT c.c_id, c_balance, c_first, c_middle, coalesce(o.o_id, 0), o.o_entry_d, o.o_carrier_id
FROM customer c LEFT JOIN orders o
  ON o.o_w_id = c.c_w_id AND o.o_d_id = c.c_d_id AND o.o_c_id = c.c_id
 AND o.o_id = (SELECT max(o2.o_id) FROM orders o2 WHERE o2.o_w_id = c.c_w_id AND o2.o_d_id = c.c_d_id AND o2.o_c_id = c.c_id)
WHERE c.c_w_id = $1 AND c.c_d_id = $2 AND c.c_last = $3
ORDER BY c_first, c.c_id;

-- One index probe per district. delivery.deletes counts the rows
-- it removed, and fewer than asked means another Delivery was first.
-- name: delivery.oldest_all
SELECT d_id, coalesce((SELECT no_o_id FROM new_order WHERE no_w_id = d_w_id AND no_d_id = d_id
                       ORDER BY no_o_id LIMIT 1), 0)
FROM district WHERE d_w_id = $1 ORDER BY d_id;

-- name: delivery.deletes
DELETE FROM new_order WHERE no_w_id = $1 AND (no_d_id, no_o_id) IN ({{($2, $3)}});

-- name: delivery.orders
SELECT o_d_id, o_c_id, coalesce(sum(ol_amount), 0)
FROM orders LEFT JOIN order_line ON ol_w_id = o_w_id AND ol_d_id = o_d_id AND ol_o_id = o_id
WHERE o_w_id = $1 AND (o_d_id, o_id) IN ({{($2, $3)}})
GROUP BY o_d_id, o_id, o_c_id;

-- name: delivery.orders_update
UPDATE orders SET o_carrier_id = $1 WHERE o_w_id = $2 AND (o_d_id, o_id) IN ({{($3, $4)}});

-- name: delivery.order_lines_update
UPDATE order_line SET ol_delivery_d = CAST(CURRENT_TIMESTAMP AS TIMESTAMP) WHERE ol_w_id = $1 AND (ol_d_id, ol_o_id) IN ({{($2, $3)}});

-- name: delivery.customers_update
UPDATE customer SET c_balance = c_balance + v.amount, c_delivery_cnt = c_delivery_cnt + 1
FROM (VALUES {{($1::INTEGER, $2::INTEGER, $3::DECIMAL(12,2))}}) AS v (d, c, amount)
WHERE c_w_id = $4 AND c_d_id = v.d AND c_id = v.c;

-- name: slev.low_stock
SELECT count(DISTINCT s.s_i_id)
FROM district d
JOIN order_line ol ON ol.ol_w_id = d.d_w_id AND ol.ol_d_id = d.d_id
                  AND ol.ol_o_id >= d.d_next_o_id - 20 AND ol.ol_o_id < d.d_next_o_id
JOIN stock s ON s.s_w_id = ol.ol_w_id AND s.s_i_id = ol.ol_i_id
WHERE d.d_w_id = $1 AND d.d_id = $2 AND s.s_quantity < $3;

