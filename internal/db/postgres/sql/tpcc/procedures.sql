-- The five TPC-C transactions as PL/pgSQL, for --mode procedure: the client
-- sends one call and the whole transaction runs inside the server.
--
-- Each is written once, as a FUNCTION (called with SELECT, HammerDB's
-- default). A PROCEDURE of the same name with a trailing INOUT result wraps
-- it, for routines=procedures (called with CALL, PostgreSQL 11+; HammerDB's
-- pg_storedprocs). Either way the server runs the call as one transaction:
-- it commits when the routine returns and rolls back when it raises.
--
-- The routines do what the Go client does statement by statement
-- (internal/workload/tpcc), with the same inputs and the same effects, so
-- that one virtual user with the same seed leaves the same table contents
-- in every mode: lines visited in (item, supplying warehouse, line number)
-- order, the same stock rule, amounts, c_data and h_data text, and the same
-- ⌈n/2⌉ customer by name. Where the client reads a row and then updates it,
-- a routine may do both in one UPDATE … RETURNING: the row is locked either
-- way and the result is the same.
--
-- Arguments and results follow the <tx>.call contract in
-- internal/workload/tpcc/stmts.go.

-- New-Order (§2.4.2.2). The order lines come as comma-separated lists in
-- line-number order. An unused item raises SQLSTATE SLD01 after the lines
-- before it were processed (§2.4.2.3); the whole call rolls back, the
-- d_next_o_id increment included, and sledge counts it as the 1% rollback.
CREATE OR REPLACE FUNCTION neword(p_w_id INTEGER, p_d_id INTEGER, p_c_id INTEGER, p_ol_cnt INTEGER,
                                  p_items TEXT, p_supply_w_ids TEXT, p_quantities TEXT)
RETURNS INTEGER LANGUAGE plpgsql AS $$
DECLARE
    v_items     INTEGER[] := string_to_array(p_items, ',')::INTEGER[];
    v_supply    INTEGER[] := string_to_array(p_supply_w_ids, ',')::INTEGER[];
    v_qty       INTEGER[] := string_to_array(p_quantities, ',')::INTEGER[];
    v_all_local INTEGER := 1;
    v_w_tax     NUMERIC;
    v_d_tax     NUMERIC;
    v_o_id      INTEGER;
    v_discount  NUMERIC;
    v_last      TEXT;
    v_credit    TEXT;
    v_line      INTEGER;
    v_price     NUMERIC;
    v_i_name    TEXT;
    v_i_data    TEXT;
    v_s_data    TEXT;
    v_dist      TEXT;
BEGIN
    IF cardinality(v_items) <> p_ol_cnt OR cardinality(v_supply) <> p_ol_cnt
       OR cardinality(v_qty) <> p_ol_cnt THEN
        RAISE EXCEPTION 'neword: % order lines but % items, % supplying warehouses, % quantities',
            p_ol_cnt, cardinality(v_items), cardinality(v_supply), cardinality(v_qty);
    END IF;
    -- §2.4.1.7: o_all_local is 1 when every line is supplied by the home warehouse.
    IF NOT (p_w_id = ALL (v_supply)) THEN
        v_all_local := 0;
    END IF;

    SELECT w_tax INTO STRICT v_w_tax FROM warehouse WHERE w_id = p_w_id;
    -- The order number is the value before the increment.
    UPDATE district SET d_next_o_id = d_next_o_id + 1
    WHERE d_w_id = p_w_id AND d_id = p_d_id
    RETURNING d_tax, d_next_o_id - 1 INTO STRICT v_d_tax, v_o_id;
    SELECT c_discount, c_last, c_credit INTO STRICT v_discount, v_last, v_credit
    FROM customer WHERE c_w_id = p_w_id AND c_d_id = p_d_id AND c_id = p_c_id;

    INSERT INTO orders (o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_carrier_id, o_ol_cnt, o_all_local)
    VALUES (v_o_id, p_d_id, p_w_id, p_c_id, now(), NULL, p_ol_cnt, v_all_local);
    INSERT INTO new_order (no_o_id, no_d_id, no_w_id) VALUES (v_o_id, p_d_id, p_w_id);

    -- §2.3.1: stock rows in item order, as the client visits them, so
    -- concurrent New-Orders lock them in one order.
    FOR v_line IN
        SELECT l.n FROM unnest(v_items, v_supply) WITH ORDINALITY AS l(item, supply, n)
        ORDER BY l.item, l.supply, l.n
    LOOP
        SELECT i_price, i_name, i_data INTO v_price, v_i_name, v_i_data
        FROM item WHERE i_id = v_items[v_line];
        IF NOT FOUND THEN
            RAISE EXCEPTION 'item % is not valid', v_items[v_line] USING ERRCODE = 'SLD01';
        END IF;
        -- §2.4.2.2: take the quantity, restocking by 91 when fewer than 10
        -- would remain.
        UPDATE stock SET
            s_quantity = CASE WHEN s_quantity >= v_qty[v_line] + 10 THEN s_quantity - v_qty[v_line]
                              ELSE s_quantity - v_qty[v_line] + 91 END,
            s_ytd = s_ytd + v_qty[v_line],
            s_order_cnt = s_order_cnt + 1,
            s_remote_cnt = s_remote_cnt + CASE WHEN v_supply[v_line] <> p_w_id THEN 1 ELSE 0 END
        WHERE s_i_id = v_items[v_line] AND s_w_id = v_supply[v_line]
        RETURNING s_data,
            CASE p_d_id WHEN 1 THEN s_dist_01 WHEN 2 THEN s_dist_02 WHEN 3 THEN s_dist_03 WHEN 4 THEN s_dist_04
                        WHEN 5 THEN s_dist_05 WHEN 6 THEN s_dist_06 WHEN 7 THEN s_dist_07 WHEN 8 THEN s_dist_08
                        WHEN 9 THEN s_dist_09 ELSE s_dist_10 END
        INTO STRICT v_s_data, v_dist;
        -- ol_amount = ol_quantity × i_price (§2.4.2.2).
        INSERT INTO order_line (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, ol_supply_w_id, ol_delivery_d,
                                ol_quantity, ol_amount, ol_dist_info)
        VALUES (v_o_id, p_d_id, p_w_id, v_line, v_items[v_line], v_supply[v_line], NULL,
                v_qty[v_line], v_qty[v_line] * v_price, v_dist);
    END LOOP;
    RETURN v_o_id;
END;
$$;

-- Payment (§2.5.2.2). by_name 1: the customer at ⌈n/2⌉ of those named
-- p_c_last in c_first order; 0: customer p_c_id. Returns the c_id paid.
CREATE OR REPLACE FUNCTION payment(p_w_id INTEGER, p_d_id INTEGER, p_c_w_id INTEGER, p_c_d_id INTEGER,
                                   p_by_name INTEGER, p_c_id INTEGER, p_c_last TEXT, p_h_amount NUMERIC)
RETURNS INTEGER LANGUAGE plpgsql AS $$
DECLARE
    v_w_name TEXT;
    v_d_name TEXT;
    v_n      BIGINT;
    v_c_id   INTEGER;
    v_credit TEXT;
BEGIN
    UPDATE warehouse SET w_ytd = w_ytd + p_h_amount WHERE w_id = p_w_id
    RETURNING w_name INTO STRICT v_w_name;
    UPDATE district SET d_ytd = d_ytd + p_h_amount WHERE d_w_id = p_w_id AND d_id = p_d_id
    RETURNING d_name INTO STRICT v_d_name;

    IF p_by_name = 1 THEN
        SELECT count(*) INTO v_n FROM customer
        WHERE c_w_id = p_c_w_id AND c_d_id = p_c_d_id AND c_last = p_c_last;
        IF v_n < 1 THEN
            RAISE EXCEPTION 'payment: no customer w=% d=% last=%', p_c_w_id, p_c_d_id, p_c_last
                USING ERRCODE = 'no_data_found';
        END IF;
        SELECT c_id, c_credit INTO STRICT v_c_id, v_credit FROM customer
        WHERE c_w_id = p_c_w_id AND c_d_id = p_c_d_id AND c_last = p_c_last
        ORDER BY c_first, c_id LIMIT 1 OFFSET (v_n + 1) / 2 - 1 FOR UPDATE;
    ELSE
        SELECT c_id, c_credit INTO STRICT v_c_id, v_credit FROM customer
        WHERE c_w_id = p_c_w_id AND c_d_id = p_c_d_id AND c_id = p_c_id FOR UPDATE;
    END IF;

    IF v_credit = 'BC' THEN
        -- §2.5.2.2: c_id, c_d_id, c_w_id, d_id, w_id and the amount in
        -- front of c_data, cut to 500 characters.
        UPDATE customer SET c_balance = c_balance - p_h_amount, c_ytd_payment = c_ytd_payment + p_h_amount,
               c_payment_cnt = c_payment_cnt + 1,
               c_data = substr(v_c_id || ' ' || p_c_d_id || ' ' || p_c_w_id || ' ' || p_d_id || ' ' || p_w_id
                               || ' ' || round(p_h_amount, 2) || ' ' || c_data, 1, 500)
        WHERE c_w_id = p_c_w_id AND c_d_id = p_c_d_id AND c_id = v_c_id;
    ELSE
        UPDATE customer SET c_balance = c_balance - p_h_amount, c_ytd_payment = c_ytd_payment + p_h_amount,
               c_payment_cnt = c_payment_cnt + 1
        WHERE c_w_id = p_c_w_id AND c_d_id = p_c_d_id AND c_id = v_c_id;
    END IF;

    -- h_data is w_name, four spaces, d_name.
    INSERT INTO history (h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_w_id, h_date, h_amount, h_data)
    VALUES (v_c_id, p_c_d_id, p_c_w_id, p_d_id, p_w_id, now(), p_h_amount, v_w_name || '    ' || v_d_name);
    RETURN v_c_id;
END;
$$;

-- Delivery (§2.7.4.2): the oldest new order of each of the ten districts,
-- in one transaction. Returns the number of districts skipped because they
-- had none.
CREATE OR REPLACE FUNCTION delivery(p_w_id INTEGER, p_carrier_id INTEGER)
RETURNS INTEGER LANGUAGE plpgsql AS $$
DECLARE
    v_d_id    INTEGER;
    v_o_id    INTEGER;
    v_c_id    INTEGER;
    v_amount  NUMERIC;
    v_rows    INTEGER;
    v_skipped INTEGER := 0;
BEGIN
    FOR v_d_id IN 1..10 LOOP
        SELECT no_o_id INTO v_o_id FROM new_order
        WHERE no_w_id = p_w_id AND no_d_id = v_d_id ORDER BY no_o_id LIMIT 1 FOR UPDATE;
        IF NOT FOUND THEN
            v_skipped := v_skipped + 1;
            CONTINUE;
        END IF;
        DELETE FROM new_order WHERE no_w_id = p_w_id AND no_d_id = v_d_id AND no_o_id = v_o_id;
        GET DIAGNOSTICS v_rows = ROW_COUNT;
        IF v_rows <> 1 THEN
            -- Delivered concurrently: retry, as the client does.
            RAISE EXCEPTION 'delivery: new order w=% d=% o=% was delivered concurrently', p_w_id, v_d_id, v_o_id
                USING ERRCODE = 'serialization_failure';
        END IF;
        UPDATE orders SET o_carrier_id = p_carrier_id
        WHERE o_w_id = p_w_id AND o_d_id = v_d_id AND o_id = v_o_id
        RETURNING o_c_id INTO STRICT v_c_id;
        UPDATE order_line SET ol_delivery_d = now()
        WHERE ol_w_id = p_w_id AND ol_d_id = v_d_id AND ol_o_id = v_o_id;
        SELECT coalesce(sum(ol_amount), 0) INTO v_amount FROM order_line
        WHERE ol_w_id = p_w_id AND ol_d_id = v_d_id AND ol_o_id = v_o_id;
        UPDATE customer SET c_balance = c_balance + v_amount, c_delivery_cnt = c_delivery_cnt + 1
        WHERE c_w_id = p_w_id AND c_d_id = v_d_id AND c_id = v_c_id;
    END LOOP;
    RETURN v_skipped;
END;
$$;

-- Stock-Level (§2.8.2.2): distinct items of the district's last 20 orders
-- whose stock in the home warehouse is below the threshold.
CREATE OR REPLACE FUNCTION slev(p_w_id INTEGER, p_d_id INTEGER, p_threshold INTEGER)
RETURNS INTEGER LANGUAGE plpgsql AS $$
DECLARE
    v_next  INTEGER;
    v_count INTEGER;
BEGIN
    SELECT d_next_o_id INTO STRICT v_next FROM district WHERE d_w_id = p_w_id AND d_id = p_d_id;
    SELECT count(DISTINCT s.s_i_id) INTO v_count
    FROM order_line ol JOIN stock s ON s.s_w_id = ol.ol_w_id AND s.s_i_id = ol.ol_i_id
    WHERE ol.ol_w_id = p_w_id AND ol.ol_d_id = p_d_id
      AND ol.ol_o_id >= v_next - 20 AND ol.ol_o_id < v_next
      AND s.s_quantity < p_threshold;
    RETURN v_count;
END;
$$;

-- Order-Status (§2.6.2.2): the customer (by name as in Payment, or by
-- number), their newest order and its lines. Returns that order's o_id.
CREATE OR REPLACE FUNCTION ostat(p_w_id INTEGER, p_d_id INTEGER, p_by_name INTEGER, p_c_id INTEGER, p_c_last TEXT)
RETURNS INTEGER LANGUAGE plpgsql AS $$
DECLARE
    v_n       BIGINT;
    v_c_id    INTEGER := p_c_id;
    v_balance NUMERIC;
    v_first   TEXT;
    v_middle  TEXT;
    v_last    TEXT := p_c_last;
    v_o_id    INTEGER;
    v_entry   TIMESTAMPTZ;
    v_carrier INTEGER;
    v_line    RECORD;
    v_lines   INTEGER := 0;
BEGIN
    IF p_by_name = 1 THEN
        SELECT count(*) INTO v_n FROM customer
        WHERE c_w_id = p_w_id AND c_d_id = p_d_id AND c_last = p_c_last;
        IF v_n < 1 THEN
            RAISE EXCEPTION 'ostat: no customer w=% d=% last=%', p_w_id, p_d_id, p_c_last
                USING ERRCODE = 'no_data_found';
        END IF;
        SELECT c_id, c_balance, c_first, c_middle INTO STRICT v_c_id, v_balance, v_first, v_middle
        FROM customer WHERE c_w_id = p_w_id AND c_d_id = p_d_id AND c_last = p_c_last
        ORDER BY c_first, c_id LIMIT 1 OFFSET (v_n + 1) / 2 - 1;
    ELSE
        SELECT c_balance, c_first, c_middle, c_last INTO STRICT v_balance, v_first, v_middle, v_last
        FROM customer WHERE c_w_id = p_w_id AND c_d_id = p_d_id AND c_id = p_c_id;
    END IF;
    SELECT o_id, o_entry_d, o_carrier_id INTO STRICT v_o_id, v_entry, v_carrier FROM orders
    WHERE o_w_id = p_w_id AND o_d_id = p_d_id AND o_c_id = v_c_id
    ORDER BY o_id DESC LIMIT 1;
    FOR v_line IN
        SELECT ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_delivery_d FROM order_line
        WHERE ol_w_id = p_w_id AND ol_d_id = p_d_id AND ol_o_id = v_o_id
    LOOP
        v_lines := v_lines + 1;
    END LOOP;
    RETURN v_o_id;
END;
$$;

-- The same transactions as PROCEDUREs for routines=procedures: each calls
-- its function, so the logic exists once. The result is the INOUT argument.
CREATE OR REPLACE PROCEDURE neword(p_w_id INTEGER, p_d_id INTEGER, p_c_id INTEGER, p_ol_cnt INTEGER,
                                   p_items TEXT, p_supply_w_ids TEXT, p_quantities TEXT, INOUT o_id INTEGER)
LANGUAGE plpgsql AS $$
BEGIN
    o_id := neword(p_w_id, p_d_id, p_c_id, p_ol_cnt, p_items, p_supply_w_ids, p_quantities);
END;
$$;

CREATE OR REPLACE PROCEDURE payment(p_w_id INTEGER, p_d_id INTEGER, p_c_w_id INTEGER, p_c_d_id INTEGER,
                                    p_by_name INTEGER, p_c_id INTEGER, p_c_last TEXT, p_h_amount NUMERIC,
                                    INOUT c_id INTEGER)
LANGUAGE plpgsql AS $$
BEGIN
    c_id := payment(p_w_id, p_d_id, p_c_w_id, p_c_d_id, p_by_name, p_c_id, p_c_last, p_h_amount);
END;
$$;

CREATE OR REPLACE PROCEDURE delivery(p_w_id INTEGER, p_carrier_id INTEGER, INOUT skipped INTEGER)
LANGUAGE plpgsql AS $$
BEGIN
    skipped := delivery(p_w_id, p_carrier_id);
END;
$$;

CREATE OR REPLACE PROCEDURE slev(p_w_id INTEGER, p_d_id INTEGER, p_threshold INTEGER, INOUT low_stock INTEGER)
LANGUAGE plpgsql AS $$
BEGIN
    low_stock := slev(p_w_id, p_d_id, p_threshold);
END;
$$;

CREATE OR REPLACE PROCEDURE ostat(p_w_id INTEGER, p_d_id INTEGER, p_by_name INTEGER, p_c_id INTEGER, p_c_last TEXT,
                                  INOUT o_id INTEGER)
LANGUAGE plpgsql AS $$
BEGIN
    o_id := ostat(p_w_id, p_d_id, p_by_name, p_c_id, p_c_last);
END;
$$;
