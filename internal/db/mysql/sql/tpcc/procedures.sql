-- TPC-C stored procedures for MariaDB and MySQL 8: the five transactions of
-- procedure mode, one CALL each (the <tx>.call contract in
-- internal/workload/tpcc/stmts.go). Each one does exactly what the Go
-- client does in client and prepared modes, statement by statement, so the
-- three modes leave identical tables for the same inputs.
--
-- Each procedure runs its own transaction (START TRANSACTION … COMMIT):
-- in autocommit mode every statement would otherwise commit by itself. On
-- any error the EXIT handler rolls the whole transaction back and passes
-- the error on (RESIGNAL) for sledge to classify: 1213 deadlock and 1205
-- lock wait timeout are retried, 5001 is the 1% New-Order rollback, 5002 a
-- Delivery that lost its order to another one (retried). The result is the
-- last statement, a one-row SELECT after COMMIT.

DROP PROCEDURE IF EXISTS neword;
DROP PROCEDURE IF EXISTS payment;
DROP PROCEDURE IF EXISTS delivery;
DROP PROCEDURE IF EXISTS slev;
DROP PROCEDURE IF EXISTS ostat;

DELIMITER $$

-- New-Order (§2.4.2.2). The lines come as three comma-separated lists in
-- ol_number order; they are visited in (item, supply warehouse, ol_number)
-- order, as the Go client does (§2.3.1: concurrent New-Orders lock stock
-- rows in one order), while ol_number keeps the input order. An unused
-- item (the largest id, so visited last) raises 5001 after the lines
-- before it were processed, and everything rolls back, d_next_o_id too.
CREATE PROCEDURE neword(
    IN p_w INT, IN p_d INT, IN p_c INT, IN p_ol_cnt INT,
    IN p_items VARCHAR(255), IN p_supply VARCHAR(255), IN p_qty VARCHAR(255))
BEGIN
    DECLARE v_w_tax, v_d_tax, v_discount DECIMAL(4,4);
    DECLARE v_o_id INT;
    DECLARE v_last VARCHAR(16);
    DECLARE v_credit CHAR(2);
    DECLARE v_all_local SMALLINT DEFAULT 1;
    DECLARE v_n, v_i, v_s, v_q, v_s_qty INT;
    DECLARE v_price DECIMAL(5,2);
    DECLARE v_amount, v_sum DECIMAL(12,2) DEFAULT 0;
    DECLARE v_i_name VARCHAR(24);
    DECLARE v_i_data, v_s_data VARCHAR(50);
    DECLARE v_dist CHAR(24);
    DECLARE v_total DECIMAL(14,4);
    DECLARE v_msg VARCHAR(128);
    DECLARE v_notfound INT DEFAULT 0;
    -- The lines split from the lists, sorted for the visit. A constant
    -- derived table of 1..15 numbers them (no recursive CTE needed).
    DECLARE line_cur CURSOR FOR
        SELECT n,
               CAST(SUBSTRING_INDEX(SUBSTRING_INDEX(p_items, ',', n), ',', -1) AS SIGNED) AS i,
               CAST(SUBSTRING_INDEX(SUBSTRING_INDEX(p_supply, ',', n), ',', -1) AS SIGNED) AS s,
               CAST(SUBSTRING_INDEX(SUBSTRING_INDEX(p_qty, ',', n), ',', -1) AS SIGNED) AS q
        FROM (SELECT 1 AS n UNION ALL SELECT 2 UNION ALL SELECT 3 UNION ALL SELECT 4 UNION ALL SELECT 5
              UNION ALL SELECT 6 UNION ALL SELECT 7 UNION ALL SELECT 8 UNION ALL SELECT 9 UNION ALL SELECT 10
              UNION ALL SELECT 11 UNION ALL SELECT 12 UNION ALL SELECT 13 UNION ALL SELECT 14 UNION ALL SELECT 15) seq
        WHERE n <= p_ol_cnt
        ORDER BY i, s, n;
    DECLARE CONTINUE HANDLER FOR NOT FOUND SET v_notfound = 1;
    DECLARE EXIT HANDLER FOR SQLEXCEPTION
    BEGIN
        ROLLBACK;
        RESIGNAL;
    END;

    -- §2.4.1.7: all local when every supply warehouse is the home one
    -- (the client formats the list, so the text comparison is exact).
    IF p_supply <> TRIM(TRAILING ',' FROM REPEAT(CONCAT(p_w, ','), p_ol_cnt)) THEN
        SET v_all_local = 0;
    END IF;

    START TRANSACTION;
    SELECT w_tax INTO v_w_tax FROM warehouse WHERE w_id = p_w;
    SELECT d_tax, d_next_o_id INTO v_d_tax, v_o_id FROM district WHERE d_w_id = p_w AND d_id = p_d FOR UPDATE;
    UPDATE district SET d_next_o_id = d_next_o_id + 1 WHERE d_w_id = p_w AND d_id = p_d;
    SELECT c_discount, c_last, c_credit INTO v_discount, v_last, v_credit
    FROM customer WHERE c_w_id = p_w AND c_d_id = p_d AND c_id = p_c;
    INSERT INTO orders (o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_carrier_id, o_ol_cnt, o_all_local)
    VALUES (v_o_id, p_d, p_w, p_c, NOW(), NULL, p_ol_cnt, v_all_local);
    INSERT INTO new_order (no_o_id, no_d_id, no_w_id) VALUES (v_o_id, p_d, p_w);

    OPEN line_cur;
    visit: LOOP
        FETCH line_cur INTO v_n, v_i, v_s, v_q;
        IF v_notfound = 1 THEN
            LEAVE visit;
        END IF;
        SELECT i_price, i_name, i_data INTO v_price, v_i_name, v_i_data FROM item WHERE i_id = v_i;
        IF v_notfound = 1 THEN
            -- §2.4.2.3: "Item number is not valid"; the handler rolls back.
            SET v_msg = CONCAT('item ', v_i, ' is not valid (w=', p_w, ' d=', p_d, ' o=', v_o_id, ')');
            SIGNAL SQLSTATE '45000' SET MYSQL_ERRNO = 5001, MESSAGE_TEXT = v_msg;
        END IF;
        SELECT s_quantity, s_data,
               CASE p_d WHEN 1 THEN s_dist_01 WHEN 2 THEN s_dist_02 WHEN 3 THEN s_dist_03 WHEN 4 THEN s_dist_04
                        WHEN 5 THEN s_dist_05 WHEN 6 THEN s_dist_06 WHEN 7 THEN s_dist_07 WHEN 8 THEN s_dist_08
                        WHEN 9 THEN s_dist_09 ELSE s_dist_10 END
        INTO v_s_qty, v_s_data, v_dist
        FROM stock WHERE s_i_id = v_i AND s_w_id = v_s FOR UPDATE;
        -- §2.4.2.2: take the quantity, restocking by 91 when fewer than 10
        -- would remain.
        UPDATE stock SET s_quantity = IF(v_s_qty >= v_q + 10, v_s_qty - v_q, v_s_qty - v_q + 91),
                         s_ytd = s_ytd + v_q, s_order_cnt = s_order_cnt + 1,
                         s_remote_cnt = s_remote_cnt + IF(v_s <> p_w, 1, 0)
        WHERE s_i_id = v_i AND s_w_id = v_s;
        SET v_amount = v_q * v_price;
        SET v_sum = v_sum + v_amount;
        INSERT INTO order_line (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, ol_supply_w_id, ol_delivery_d,
                                ol_quantity, ol_amount, ol_dist_info)
        VALUES (v_o_id, p_d, p_w, v_n, v_i, v_s, NULL, v_q, v_amount, v_dist);
    END LOOP;
    CLOSE line_cur;
    -- Display only, as the client computes it.
    SET v_total = v_sum * (1 - v_discount) * (1 + v_w_tax + v_d_tax);
    COMMIT;
    SELECT v_o_id;
END$$

-- Payment (§2.5.2.2). by_name = 1 finds the customer at ⌈n/2⌉ of those
-- named p_last in c_first order; else by p_c. A bad-credit customer gets
-- "c_id c_d_id c_w_id d_id w_id h_amount " in front of c_data, cut to 500
-- characters: CONCAT writes the DECIMAL(6,2) amount with two decimals and
-- no separators, as the client's strconv 'f' format does.
CREATE PROCEDURE payment(
    IN p_w INT, IN p_d INT, IN p_c_w INT, IN p_c_d INT, IN p_by_name INT,
    IN p_c INT, IN p_last VARCHAR(16), IN p_amount DECIMAL(6,2))
BEGIN
    DECLARE v_w_name, v_d_name VARCHAR(10);
    DECLARE v_street_1, v_street_2, v_city VARCHAR(20);
    DECLARE v_state CHAR(2);
    DECLARE v_zip CHAR(9);
    DECLARE v_n, v_offset, v_c INT;
    DECLARE v_first, v_c_last VARCHAR(16);
    DECLARE v_middle, v_credit CHAR(2);
    DECLARE v_phone CHAR(16);
    DECLARE v_since DATETIME;
    DECLARE v_credit_lim, v_balance DECIMAL(12,2);
    DECLARE v_discount DECIMAL(4,4);
    DECLARE v_data VARCHAR(500);
    DECLARE EXIT HANDLER FOR SQLEXCEPTION
    BEGIN
        ROLLBACK;
        RESIGNAL;
    END;

    START TRANSACTION;
    UPDATE warehouse SET w_ytd = w_ytd + p_amount WHERE w_id = p_w;
    SELECT w_name, w_street_1, w_street_2, w_city, w_state, w_zip
    INTO v_w_name, v_street_1, v_street_2, v_city, v_state, v_zip
    FROM warehouse WHERE w_id = p_w;
    UPDATE district SET d_ytd = d_ytd + p_amount WHERE d_w_id = p_w AND d_id = p_d;
    SELECT d_name, d_street_1, d_street_2, d_city, d_state, d_zip
    INTO v_d_name, v_street_1, v_street_2, v_city, v_state, v_zip
    FROM district WHERE d_w_id = p_w AND d_id = p_d;

    IF p_by_name = 1 THEN
        SELECT COUNT(*) INTO v_n FROM customer WHERE c_w_id = p_c_w AND c_d_id = p_c_d AND c_last = p_last;
        IF v_n < 1 THEN
            SIGNAL SQLSTATE '45000' SET MYSQL_ERRNO = 5003, MESSAGE_TEXT = 'payment: no customer with that last name';
        END IF;
        SET v_offset = (v_n + 1) DIV 2 - 1;
        SELECT c_id, c_first, c_middle, c_last, c_street_1, c_street_2, c_city, c_state, c_zip, c_phone,
               c_since, c_credit, c_credit_lim, c_discount, c_balance
        INTO v_c, v_first, v_middle, v_c_last, v_street_1, v_street_2, v_city, v_state, v_zip, v_phone,
             v_since, v_credit, v_credit_lim, v_discount, v_balance
        FROM customer WHERE c_w_id = p_c_w AND c_d_id = p_c_d AND c_last = p_last
        ORDER BY c_first LIMIT v_offset, 1 FOR UPDATE;
    ELSE
        SELECT c_id, c_first, c_middle, c_last, c_street_1, c_street_2, c_city, c_state, c_zip, c_phone,
               c_since, c_credit, c_credit_lim, c_discount, c_balance
        INTO v_c, v_first, v_middle, v_c_last, v_street_1, v_street_2, v_city, v_state, v_zip, v_phone,
             v_since, v_credit, v_credit_lim, v_discount, v_balance
        FROM customer WHERE c_w_id = p_c_w AND c_d_id = p_c_d AND c_id = p_c FOR UPDATE;
    END IF;

    IF v_credit = 'BC' THEN
        SELECT c_data INTO v_data FROM customer WHERE c_w_id = p_c_w AND c_d_id = p_c_d AND c_id = v_c;
        SET v_data = LEFT(CONCAT(v_c, ' ', p_c_d, ' ', p_c_w, ' ', p_d, ' ', p_w, ' ', p_amount, ' ', v_data), 500);
        UPDATE customer SET c_balance = c_balance - p_amount, c_ytd_payment = c_ytd_payment + p_amount,
                            c_payment_cnt = c_payment_cnt + 1, c_data = v_data
        WHERE c_w_id = p_c_w AND c_d_id = p_c_d AND c_id = v_c;
    ELSE
        UPDATE customer SET c_balance = c_balance - p_amount, c_ytd_payment = c_ytd_payment + p_amount,
                            c_payment_cnt = c_payment_cnt + 1
        WHERE c_w_id = p_c_w AND c_d_id = p_c_d AND c_id = v_c;
    END IF;

    -- §2.5.2.2: h_data is w_name, four spaces, d_name.
    INSERT INTO history (h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_w_id, h_date, h_amount, h_data)
    VALUES (v_c, p_c_d, p_c_w, p_d, p_w, NOW(), p_amount, CONCAT(v_w_name, '    ', v_d_name));
    COMMIT;
    SELECT v_c;
END$$

-- Delivery (§2.7.4.2): all ten districts in one transaction; returns the
-- number of districts skipped for want of a new order.
CREATE PROCEDURE delivery(IN p_w INT, IN p_carrier INT)
BEGIN
    DECLARE v_d, v_o, v_c INT;
    DECLARE v_skipped INT DEFAULT 0;
    DECLARE v_sum DECIMAL(12,2);
    DECLARE v_notfound INT DEFAULT 0;
    DECLARE CONTINUE HANDLER FOR NOT FOUND SET v_notfound = 1;
    DECLARE EXIT HANDLER FOR SQLEXCEPTION
    BEGIN
        ROLLBACK;
        RESIGNAL;
    END;

    START TRANSACTION;
    SET v_d = 1;
    WHILE v_d <= 10 DO
        SET v_notfound = 0;
        SELECT no_o_id INTO v_o FROM new_order WHERE no_w_id = p_w AND no_d_id = v_d
        ORDER BY no_o_id LIMIT 1 FOR UPDATE;
        IF v_notfound = 1 THEN
            SET v_skipped = v_skipped + 1; -- no new order here: skip this district only
        ELSE
            DELETE FROM new_order WHERE no_w_id = p_w AND no_d_id = v_d AND no_o_id = v_o;
            IF ROW_COUNT() <> 1 THEN
                SIGNAL SQLSTATE '40001' SET MYSQL_ERRNO = 5002, MESSAGE_TEXT = 'delivery: the new order was delivered concurrently';
            END IF;
            SELECT o_c_id INTO v_c FROM orders WHERE o_w_id = p_w AND o_d_id = v_d AND o_id = v_o;
            UPDATE orders SET o_carrier_id = p_carrier WHERE o_w_id = p_w AND o_d_id = v_d AND o_id = v_o;
            UPDATE order_line SET ol_delivery_d = NOW() WHERE ol_w_id = p_w AND ol_d_id = v_d AND ol_o_id = v_o;
            SELECT COALESCE(SUM(ol_amount), 0) INTO v_sum
            FROM order_line WHERE ol_w_id = p_w AND ol_d_id = v_d AND ol_o_id = v_o;
            UPDATE customer SET c_balance = c_balance + v_sum, c_delivery_cnt = c_delivery_cnt + 1
            WHERE c_w_id = p_w AND c_d_id = v_d AND c_id = v_c;
        END IF;
        SET v_d = v_d + 1;
    END WHILE;
    COMMIT;
    SELECT v_skipped;
END$$

-- Stock-Level (§2.8.2.2): read only.
CREATE PROCEDURE slev(IN p_w INT, IN p_d INT, IN p_threshold INT)
BEGIN
    DECLARE v_next INT;
    DECLARE v_low INT;
    DECLARE EXIT HANDLER FOR SQLEXCEPTION
    BEGIN
        ROLLBACK;
        RESIGNAL;
    END;

    START TRANSACTION READ ONLY;
    SELECT d_next_o_id INTO v_next FROM district WHERE d_w_id = p_w AND d_id = p_d;
    SELECT COUNT(DISTINCT s.s_i_id) INTO v_low
    FROM order_line ol JOIN stock s ON s.s_w_id = ol.ol_w_id AND s.s_i_id = ol.ol_i_id
    WHERE ol.ol_w_id = p_w AND ol.ol_d_id = p_d AND ol.ol_o_id >= v_next - 20 AND ol.ol_o_id < v_next
      AND s.s_quantity < p_threshold;
    COMMIT;
    SELECT v_low;
END$$

-- Order-Status (§2.6.2.2): read only; returns the newest order's o_id
-- after reading its lines.
CREATE PROCEDURE ostat(IN p_w INT, IN p_d INT, IN p_by_name INT, IN p_c INT, IN p_last VARCHAR(16))
BEGIN
    DECLARE v_n, v_offset, v_c, v_o INT;
    DECLARE v_balance DECIMAL(12,2);
    DECLARE v_first, v_last VARCHAR(16);
    DECLARE v_middle CHAR(2);
    DECLARE v_entry DATETIME;
    DECLARE v_carrier SMALLINT;
    DECLARE v_ol_i, v_ol_supply INT;
    DECLARE v_ol_qty SMALLINT;
    DECLARE v_ol_amount DECIMAL(6,2);
    DECLARE v_ol_delivery DATETIME;
    DECLARE v_notfound INT DEFAULT 0;
    DECLARE order_lines CURSOR FOR
        SELECT ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_delivery_d FROM order_line
        WHERE ol_w_id = p_w AND ol_d_id = p_d AND ol_o_id = v_o;
    DECLARE CONTINUE HANDLER FOR NOT FOUND SET v_notfound = 1;
    DECLARE EXIT HANDLER FOR SQLEXCEPTION
    BEGIN
        ROLLBACK;
        RESIGNAL;
    END;

    START TRANSACTION READ ONLY;
    IF p_by_name = 1 THEN
        SELECT COUNT(*) INTO v_n FROM customer WHERE c_w_id = p_w AND c_d_id = p_d AND c_last = p_last;
        IF v_n < 1 THEN
            SIGNAL SQLSTATE '45000' SET MYSQL_ERRNO = 5003, MESSAGE_TEXT = 'ostat: no customer with that last name';
        END IF;
        SET v_offset = (v_n + 1) DIV 2 - 1;
        SELECT c_id, c_balance, c_first, c_middle INTO v_c, v_balance, v_first, v_middle
        FROM customer WHERE c_w_id = p_w AND c_d_id = p_d AND c_last = p_last
        ORDER BY c_first LIMIT v_offset, 1;
    ELSE
        SET v_c = p_c;
        SELECT c_balance, c_first, c_middle, c_last INTO v_balance, v_first, v_middle, v_last
        FROM customer WHERE c_w_id = p_w AND c_d_id = p_d AND c_id = p_c;
    END IF;
    SELECT o_id, o_entry_d, o_carrier_id INTO v_o, v_entry, v_carrier
    FROM orders WHERE o_w_id = p_w AND o_d_id = p_d AND o_c_id = v_c
    ORDER BY o_id DESC LIMIT 1;
    IF v_notfound = 1 THEN
        SIGNAL SQLSTATE '45000' SET MYSQL_ERRNO = 5003, MESSAGE_TEXT = 'ostat: the customer has no order';
    END IF;
    OPEN order_lines;
    read_lines: LOOP
        FETCH order_lines INTO v_ol_i, v_ol_supply, v_ol_qty, v_ol_amount, v_ol_delivery;
        IF v_notfound = 1 THEN
            LEAVE read_lines;
        END IF;
    END LOOP;
    CLOSE order_lines;
    COMMIT;
    SELECT v_o;
END$$

DELIMITER ;
