-- TPC-C consistency conditions (§3.3.2, docs/tpcc.md part 8) for DuckDB.
-- Each "check.<ID>" returns the number of violations (0 = holds). Money
-- is DECIMAL (exact); it is compared to the cent, abs(x - y) > 0.005, as
-- on SQLite, so the two files say the same.

-- name: check.1
-- W_YTD = sum(D_YTD)
SELECT count(*) FROM warehouse w
JOIN (SELECT d_w_id, sum(d_ytd) s FROM district GROUP BY d_w_id) d ON d.d_w_id = w.w_id
WHERE abs(w.w_ytd - d.s) > 0.005;

-- name: check.2
-- D_NEXT_O_ID - 1 = max(O_ID) = max(NO_O_ID)
SELECT count(*) FROM district d
JOIN (SELECT o_w_id, o_d_id, max(o_id) m FROM orders GROUP BY o_w_id, o_d_id) o
  ON o.o_w_id = d.d_w_id AND o.o_d_id = d.d_id
LEFT JOIN (SELECT no_w_id, no_d_id, max(no_o_id) m FROM new_order GROUP BY no_w_id, no_d_id) n
  ON n.no_w_id = d.d_w_id AND n.no_d_id = d.d_id
WHERE d.d_next_o_id - 1 <> o.m OR (n.m IS NOT NULL AND n.m <> o.m);

-- name: check.3
-- max(NO_O_ID) - min(NO_O_ID) + 1 = rows in NEW-ORDER, per district
SELECT count(*) FROM (
  SELECT no_w_id, no_d_id FROM new_order GROUP BY no_w_id, no_d_id
  HAVING max(no_o_id) - min(no_o_id) + 1 <> count(*)
);

-- name: check.4
-- sum(O_OL_CNT) = rows in ORDER-LINE, per district
SELECT count(*) FROM (SELECT o_w_id, o_d_id, sum(o_ol_cnt) s FROM orders GROUP BY o_w_id, o_d_id) o
JOIN (SELECT ol_w_id, ol_d_id, count(*) c FROM order_line GROUP BY ol_w_id, ol_d_id) l
  ON l.ol_w_id = o.o_w_id AND l.ol_d_id = o.o_d_id
WHERE o.s <> l.c;

-- name: check.5
-- O_CARRIER_ID is NULL exactly when a NEW-ORDER row exists
SELECT count(*) FROM orders o
LEFT JOIN new_order n ON n.no_w_id = o.o_w_id AND n.no_d_id = o.o_d_id AND n.no_o_id = o.o_id
WHERE (o.o_carrier_id IS NULL) <> (n.no_o_id IS NOT NULL);

-- name: check.6
-- O_OL_CNT = rows in ORDER-LINE, per order
SELECT count(*) FROM orders o
LEFT JOIN (SELECT ol_w_id, ol_d_id, ol_o_id, count(*) c FROM order_line GROUP BY ol_w_id, ol_d_id, ol_o_id) l
  ON l.ol_w_id = o.o_w_id AND l.ol_d_id = o.o_d_id AND l.ol_o_id = o.o_id
WHERE o.o_ol_cnt <> coalesce(l.c, 0);

-- name: check.7
-- OL_DELIVERY_D is NULL exactly when O_CARRIER_ID is NULL
SELECT count(*) FROM order_line l
JOIN orders o ON o.o_w_id = l.ol_w_id AND o.o_d_id = l.ol_d_id AND o.o_id = l.ol_o_id
WHERE (l.ol_delivery_d IS NULL) <> (o.o_carrier_id IS NULL);

-- name: check.8
-- W_YTD = sum(H_AMOUNT) of the warehouse
SELECT count(*) FROM warehouse w
JOIN (SELECT h_w_id, sum(h_amount) s FROM history GROUP BY h_w_id) h ON h.h_w_id = w.w_id
WHERE abs(w.w_ytd - h.s) > 0.005;

-- name: check.9
-- D_YTD = sum(H_AMOUNT) of the district
SELECT count(*) FROM district d
JOIN (SELECT h_w_id, h_d_id, sum(h_amount) s FROM history GROUP BY h_w_id, h_d_id) h
  ON h.h_w_id = d.d_w_id AND h.h_d_id = d.d_id
WHERE abs(d.d_ytd - h.s) > 0.005;

-- name: check.10
-- C_BALANCE = sum(OL_AMOUNT) delivered - sum(H_AMOUNT), per customer
SELECT count(*) FROM customer c
LEFT JOIN (SELECT o.o_w_id, o.o_d_id, o.o_c_id, sum(l.ol_amount) s
           FROM orders o JOIN order_line l
             ON l.ol_w_id = o.o_w_id AND l.ol_d_id = o.o_d_id AND l.ol_o_id = o.o_id
           WHERE l.ol_delivery_d IS NOT NULL
           GROUP BY o.o_w_id, o.o_d_id, o.o_c_id) ol
  ON ol.o_w_id = c.c_w_id AND ol.o_d_id = c.c_d_id AND ol.o_c_id = c.c_id
LEFT JOIN (SELECT h_c_w_id, h_c_d_id, h_c_id, sum(h_amount) s FROM history
           GROUP BY h_c_w_id, h_c_d_id, h_c_id) h
  ON h.h_c_w_id = c.c_w_id AND h.h_c_d_id = c.c_d_id AND h.h_c_id = c.c_id
WHERE abs(c.c_balance - (coalesce(ol.s, 0) - coalesce(h.s, 0))) > 0.005;

-- name: check.11
-- rows in ORDER - rows in NEW-ORDER = 2100, per district (initial population only)
SELECT count(*) FROM (SELECT o_w_id, o_d_id, count(*) c FROM orders GROUP BY o_w_id, o_d_id) o
JOIN (SELECT no_w_id, no_d_id, count(*) c FROM new_order GROUP BY no_w_id, no_d_id) n
  ON n.no_w_id = o.o_w_id AND n.no_d_id = o.o_d_id
WHERE o.c - n.c <> 2100;

-- name: check.11.applies
-- Orders past the initial 2,100 that were delivered: a Delivery has run.
SELECT count(*) FROM orders WHERE o_id > 2100 AND o_carrier_id IS NOT NULL;

-- name: check.12
-- C_BALANCE + C_YTD_PAYMENT = sum(OL_AMOUNT) delivered, per customer
SELECT count(*) FROM customer c
LEFT JOIN (SELECT o.o_w_id, o.o_d_id, o.o_c_id, sum(l.ol_amount) s
           FROM orders o JOIN order_line l
             ON l.ol_w_id = o.o_w_id AND l.ol_d_id = o.o_d_id AND l.ol_o_id = o.o_id
           WHERE l.ol_delivery_d IS NOT NULL
           GROUP BY o.o_w_id, o.o_d_id, o.o_c_id) ol
  ON ol.o_w_id = c.c_w_id AND ol.o_d_id = c.c_d_id AND ol.o_c_id = c.c_id
WHERE abs(c.c_balance + c.c_ytd_payment - coalesce(ol.s, 0)) > 0.005;
