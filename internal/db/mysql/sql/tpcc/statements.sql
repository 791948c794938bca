-- TPC-C statements for MariaDB and MySQL. The contract (names, argument
-- order, result columns) is documented in internal/workload/tpcc/stmts.go.
-- Arguments are plain ? markers: each argument appears once, in order.
--
-- Rows that a transaction goes on to update are read with FOR UPDATE
-- (stmts.go marks them "lock"): under InnoDB's REPEATABLE READ a plain
-- SELECT reads the transaction's snapshot, a locking read the latest
-- committed row, and the lock makes concurrent New-Orders of one district
-- or Payments of one customer wait instead of both going ahead. Dates come
-- from the server's clock (NOW()).

-- name: meta.get
SELECT name, value FROM sledge_meta;

-- name: tpcc.nopm
SELECT CAST(COALESCE(SUM(d_next_o_id), 0) AS SIGNED) FROM district;

-- New-Order (§2.4.2.2)

-- name: neword.warehouse
SELECT w_tax FROM warehouse WHERE w_id = ?;

-- name: neword.district
SELECT d_tax, d_next_o_id FROM district WHERE d_w_id = ? AND d_id = ? FOR UPDATE;

-- name: neword.district_update
UPDATE district SET d_next_o_id = d_next_o_id + 1 WHERE d_w_id = ? AND d_id = ?;

-- name: neword.customer
SELECT c_discount, c_last, c_credit FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?;

-- name: neword.order
INSERT INTO orders (o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_carrier_id, o_ol_cnt, o_all_local)
VALUES (?, ?, ?, ?, NOW(), NULL, ?, ?);

-- name: neword.new_order
INSERT INTO new_order (no_o_id, no_d_id, no_w_id) VALUES (?, ?, ?);

-- name: neword.item
SELECT i_price, i_name, i_data FROM item WHERE i_id = ?;

-- name: neword.stock
SELECT s_quantity, s_data,
       CASE ? WHEN 1 THEN s_dist_01 WHEN 2 THEN s_dist_02 WHEN 3 THEN s_dist_03 WHEN 4 THEN s_dist_04
              WHEN 5 THEN s_dist_05 WHEN 6 THEN s_dist_06 WHEN 7 THEN s_dist_07 WHEN 8 THEN s_dist_08
              WHEN 9 THEN s_dist_09 ELSE s_dist_10 END
FROM stock WHERE s_i_id = ? AND s_w_id = ? FOR UPDATE;

-- name: neword.stock_update
UPDATE stock SET s_quantity = ?, s_ytd = s_ytd + ?, s_order_cnt = s_order_cnt + 1, s_remote_cnt = s_remote_cnt + ?
WHERE s_i_id = ? AND s_w_id = ?;

-- name: neword.order_line
INSERT INTO order_line (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, ol_supply_w_id, ol_delivery_d,
                        ol_quantity, ol_amount, ol_dist_info)
VALUES (?, ?, ?, ?, ?, ?, NULL, ?, ?, ?);

-- Payment (§2.5.2.2)

-- name: payment.warehouse_update
UPDATE warehouse SET w_ytd = w_ytd + ? WHERE w_id = ?;

-- name: payment.warehouse
SELECT w_name, w_street_1, w_street_2, w_city, w_state, w_zip FROM warehouse WHERE w_id = ?;

-- name: payment.district_update
UPDATE district SET d_ytd = d_ytd + ? WHERE d_w_id = ? AND d_id = ?;

-- name: payment.district
SELECT d_name, d_street_1, d_street_2, d_city, d_state, d_zip FROM district WHERE d_w_id = ? AND d_id = ?;

-- name: payment.customer_count
SELECT COUNT(*) FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_last = ?;

-- name: payment.customer_by_name
SELECT c_id, c_first, c_middle, c_last, c_street_1, c_street_2, c_city, c_state, c_zip, c_phone,
       c_since, c_credit, c_credit_lim, c_discount, c_balance
FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_last = ?
ORDER BY c_first LIMIT 1 OFFSET ? FOR UPDATE;

-- name: payment.customer
SELECT c_id, c_first, c_middle, c_last, c_street_1, c_street_2, c_city, c_state, c_zip, c_phone,
       c_since, c_credit, c_credit_lim, c_discount, c_balance
FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_id = ? FOR UPDATE;

-- name: payment.customer_data
SELECT c_data FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?;

-- name: payment.customer_update
UPDATE customer SET c_balance = c_balance - ?, c_ytd_payment = c_ytd_payment + ?, c_payment_cnt = c_payment_cnt + 1
WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?;

-- name: payment.customer_update_bc
UPDATE customer SET c_balance = c_balance - ?, c_ytd_payment = c_ytd_payment + ?, c_payment_cnt = c_payment_cnt + 1,
       c_data = ?
WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?;

-- name: payment.history
INSERT INTO history (h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_w_id, h_date, h_amount, h_data)
VALUES (?, ?, ?, ?, ?, NOW(), ?, ?);

-- Order-Status (§2.6.2.2)

-- name: ostat.customer
SELECT c_balance, c_first, c_middle, c_last FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?;

-- name: ostat.customer_count
SELECT COUNT(*) FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_last = ?;

-- name: ostat.customer_by_name
SELECT c_id, c_balance, c_first, c_middle
FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_last = ?
ORDER BY c_first LIMIT 1 OFFSET ?;

-- name: ostat.order
SELECT o_id, o_entry_d, o_carrier_id FROM orders
WHERE o_w_id = ? AND o_d_id = ? AND o_c_id = ?
ORDER BY o_id DESC LIMIT 1;

-- name: ostat.order_lines
SELECT ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_delivery_d FROM order_line
WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id = ?;

-- Delivery (§2.7.4.2), once per district

-- name: delivery.oldest
SELECT no_o_id FROM new_order WHERE no_w_id = ? AND no_d_id = ? ORDER BY no_o_id LIMIT 1 FOR UPDATE;

-- name: delivery.delete
DELETE FROM new_order WHERE no_w_id = ? AND no_d_id = ? AND no_o_id = ?;

-- name: delivery.order
SELECT o_c_id FROM orders WHERE o_w_id = ? AND o_d_id = ? AND o_id = ?;

-- name: delivery.order_update
UPDATE orders SET o_carrier_id = ? WHERE o_w_id = ? AND o_d_id = ? AND o_id = ?;

-- name: delivery.order_line_update
UPDATE order_line SET ol_delivery_d = NOW() WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id = ?;

-- name: delivery.order_line_sum
SELECT COALESCE(SUM(ol_amount), 0) FROM order_line WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id = ?;

-- name: delivery.customer_update
UPDATE customer SET c_balance = c_balance + ?, c_delivery_cnt = c_delivery_cnt + 1
WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?;

-- Stock-Level (§2.8.2.2)

-- name: slev.district
SELECT d_next_o_id FROM district WHERE d_w_id = ? AND d_id = ?;

-- name: slev.count
SELECT COUNT(DISTINCT s.s_i_id)
FROM order_line ol JOIN stock s ON s.s_w_id = ol.ol_w_id AND s.s_i_id = ol.ol_i_id
WHERE ol.ol_w_id = ? AND ol.ol_d_id = ? AND ol.ol_o_id >= ? AND ol.ol_o_id < ?
  AND s.s_quantity < ?;

-- Batched mode (--mode batched): set-oriented statements. A {{…}} group is
-- sent repeated once per row, joined by ", " or, as {{/sep/…}}, by sep
-- (internal/db/repeat.go). Rows to update arrive as a derived table of
-- SELECTs joined by UNION ALL (MySQL has no UPDATE … FROM VALUES), cast
-- so that their types do not depend on how the parameters were bound.
-- Lists of keys are OR-ed equalities, which the range optimizer turns into
-- one index lookup each: a locking statement then locks only those rows.

-- name: neword.header
SELECT w_tax, d_tax, d_next_o_id, c_discount, c_last, c_credit
FROM warehouse, district, customer
WHERE w_id = ? AND d_w_id = w_id AND d_id = ? AND c_w_id = d_w_id AND c_d_id = d_id AND c_id = ?;

-- name: neword.items
SELECT i_id, i_price, i_name, i_data FROM item WHERE i_id IN ({{?}});

-- Locked in key order, which concurrent New-Orders share.
-- name: neword.stocks
SELECT s_i_id, s_w_id, s_quantity, s_data,
       CASE ? WHEN 1 THEN s_dist_01 WHEN 2 THEN s_dist_02 WHEN 3 THEN s_dist_03 WHEN 4 THEN s_dist_04
              WHEN 5 THEN s_dist_05 WHEN 6 THEN s_dist_06 WHEN 7 THEN s_dist_07 WHEN 8 THEN s_dist_08
              WHEN 9 THEN s_dist_09 ELSE s_dist_10 END
FROM stock WHERE {{/ OR /(s_i_id = ? AND s_w_id = ?)}}
ORDER BY s_w_id, s_i_id FOR UPDATE;

-- name: neword.stocks_update
UPDATE stock JOIN ({{/ UNION ALL /SELECT CAST(? AS SIGNED) AS i, CAST(? AS SIGNED) AS w, CAST(? AS SIGNED) AS qty,
                   CAST(? AS SIGNED) AS ytd, CAST(? AS SIGNED) AS cnt, CAST(? AS SIGNED) AS remote}}) AS v
  ON s_i_id = v.i AND s_w_id = v.w
SET s_quantity = v.qty, s_ytd = s_ytd + v.ytd, s_order_cnt = s_order_cnt + v.cnt, s_remote_cnt = s_remote_cnt + v.remote;

-- name: neword.order_lines
INSERT INTO order_line (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, ol_supply_w_id, ol_delivery_d,
                        ol_quantity, ol_amount, ol_dist_info)
VALUES {{(?, ?, ?, ?, ?, ?, NULL, ?, ?, ?)}};

-- The warehouse and district rows are locked already (their updates):
-- only the customer's lock is new.
-- name: payment.customer_wd
SELECT w_name, w_street_1, w_street_2, w_city, w_state, w_zip,
       d_name, d_street_1, d_street_2, d_city, d_state, d_zip,
       c_id, c_first, c_middle, c_last, c_street_1, c_street_2, c_city, c_state, c_zip, c_phone,
       c_since, c_credit, c_credit_lim, c_discount, c_balance, CASE WHEN c_credit = 'BC' THEN c_data END
FROM warehouse, district, customer
WHERE w_id = ? AND d_w_id = w_id AND d_id = ? AND c_w_id = ? AND c_d_id = ? AND c_id = ?
FOR UPDATE;

-- name: payment.customers_wd_by_name
SELECT w_name, w_street_1, w_street_2, w_city, w_state, w_zip,
       d_name, d_street_1, d_street_2, d_city, d_state, d_zip,
       c_id, c_first, c_middle, c_last, c_street_1, c_street_2, c_city, c_state, c_zip, c_phone,
       c_since, c_credit, c_credit_lim, c_discount, c_balance, CASE WHEN c_credit = 'BC' THEN c_data END
FROM warehouse, district, customer
WHERE w_id = ? AND d_w_id = w_id AND d_id = ? AND c_w_id = ? AND c_d_id = ? AND c_last = ?
ORDER BY c_first, c_id FOR UPDATE;

-- name: ostat.customer_order
SELECT c_balance, c_first, c_middle, c_last, COALESCE(o.o_id, 0), o.o_entry_d, o.o_carrier_id
FROM customer c LEFT JOIN orders o
  ON o.o_w_id = c.c_w_id AND o.o_d_id = c.c_d_id AND o.o_c_id = c.c_id
 AND o.o_id = (SELECT MAX(o2.o_id) FROM orders o2 WHERE o2.o_w_id = c.c_w_id AND o2.o_d_id = c.c_d_id AND o2.o_c_id = c.c_id)
WHERE c.c_w_id = ? AND c.c_d_id = ? AND c.c_id = ?;

-- name: ostat.customers_order_by_name
SELECT c.c_id, c_balance, c_first, c_middle, COALESCE(o.o_id, 0), o.o_entry_d, o.o_carrier_id
FROM customer c LEFT JOIN orders o
  ON o.o_w_id = c.c_w_id AND o.o_d_id = c.c_d_id AND o.o_c_id = c.c_id
 AND o.o_id = (SELECT MAX(o2.o_id) FROM orders o2 WHERE o2.o_w_id = c.c_w_id AND o2.o_d_id = c.c_d_id AND o2.o_c_id = c.c_id)
WHERE c.c_w_id = ? AND c.c_d_id = ? AND c.c_last = ?
ORDER BY c_first, c.c_id;

-- One index probe per district. No lock: delivery.deletes counts the rows
-- it removed, and fewer than asked means another Delivery was first.
-- name: delivery.oldest_all
SELECT d_id, COALESCE((SELECT no_o_id FROM new_order WHERE no_w_id = d_w_id AND no_d_id = d_id
                       ORDER BY no_o_id LIMIT 1), 0)
FROM district WHERE d_w_id = ? ORDER BY d_id;

-- name: delivery.deletes
DELETE FROM new_order WHERE no_w_id = ? AND ({{/ OR /(no_d_id = ? AND no_o_id = ?)}});

-- name: delivery.orders
SELECT o_d_id, o_c_id, COALESCE(SUM(ol_amount), 0)
FROM orders LEFT JOIN order_line ON ol_w_id = o_w_id AND ol_d_id = o_d_id AND ol_o_id = o_id
WHERE o_w_id = ? AND ({{/ OR /(o_d_id = ? AND o_id = ?)}})
GROUP BY o_d_id, o_id, o_c_id;

-- name: delivery.orders_update
UPDATE orders SET o_carrier_id = ? WHERE o_w_id = ? AND ({{/ OR /(o_d_id = ? AND o_id = ?)}});

-- name: delivery.order_lines_update
UPDATE order_line SET ol_delivery_d = NOW() WHERE ol_w_id = ? AND ({{/ OR /(ol_d_id = ? AND ol_o_id = ?)}});

-- name: delivery.customers_update
UPDATE customer JOIN ({{/ UNION ALL /SELECT CAST(? AS SIGNED) AS d, CAST(? AS SIGNED) AS c,
                      CAST(? AS DECIMAL(12,2)) AS amount}}) AS v
  ON c_d_id = v.d AND c_id = v.c
SET c_balance = c_balance + v.amount, c_delivery_cnt = c_delivery_cnt + 1
WHERE c_w_id = ?;

-- name: slev.low_stock
SELECT COUNT(DISTINCT s.s_i_id)
FROM district d
JOIN order_line ol ON ol.ol_w_id = d.d_w_id AND ol.ol_d_id = d.d_id
                  AND ol.ol_o_id >= d.d_next_o_id - 20 AND ol.ol_o_id < d.d_next_o_id
JOIN stock s ON s.s_w_id = ol.ol_w_id AND s.s_i_id = ol.ol_i_id
WHERE d.d_w_id = ? AND d.d_id = ? AND s.s_quantity < ?;

-- Procedure mode (sql/tpcc/procedures.sql): one CALL per transaction; each
-- procedure runs and commits its own transaction and returns one row.

-- name: neword.call
CALL neword(?, ?, ?, ?, ?, ?, ?);

-- name: payment.call
CALL payment(?, ?, ?, ?, ?, ?, ?, ?);

-- name: delivery.call
CALL delivery(?, ?);

-- name: slev.call
CALL slev(?, ?, ?);

-- name: ostat.call
CALL ostat(?, ?, ?, ?, ?);
