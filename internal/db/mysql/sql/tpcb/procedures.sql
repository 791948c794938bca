-- pgbench's tpcb-like and simple-update builtins as stored procedures for
-- MariaDB and MySQL 8, one CALL each (the <tx>.call contract in
-- internal/workload/tpcb/stmts.go): the builtin's statements in its order,
-- with its variables as arguments.
--
-- Each procedure runs its own transaction (START TRANSACTION … COMMIT):
-- in autocommit mode every statement would otherwise commit by itself. On
-- any error the EXIT handler rolls the whole transaction back and passes
-- the error on (RESIGNAL) for sledge to classify (1213 deadlock and 1205
-- lock wait timeout are retried).
--
-- The balance comes back as a one-row result set, the procedure's last
-- statement, after COMMIT: the CALL's reply carries it, so a transaction
-- is one round trip. An OUT parameter would need a second one: the client
-- passes a user variable (CALL p(…, @ab)) and reads it with SELECT @ab
-- (sledge keeps multiStatements off, and go-sql-driver has no OUT
-- parameters for prepared CALLs).

DROP PROCEDURE IF EXISTS pgbench_tpcb_like;
DROP PROCEDURE IF EXISTS pgbench_simple_update;

DELIMITER $$

CREATE PROCEDURE pgbench_tpcb_like(IN p_aid INT, IN p_bid INT, IN p_tid INT, IN p_delta INT)
BEGIN
    DECLARE v_abalance INT;
    DECLARE EXIT HANDLER FOR SQLEXCEPTION
    BEGIN
        ROLLBACK;
        RESIGNAL;
    END;

    START TRANSACTION;
    UPDATE pgbench_accounts SET abalance = abalance + p_delta WHERE aid = p_aid;
    SELECT abalance INTO v_abalance FROM pgbench_accounts WHERE aid = p_aid;
    UPDATE pgbench_tellers SET tbalance = tbalance + p_delta WHERE tid = p_tid;
    UPDATE pgbench_branches SET bbalance = bbalance + p_delta WHERE bid = p_bid;
    INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (p_tid, p_bid, p_aid, p_delta, CURRENT_TIMESTAMP);
    COMMIT;
    SELECT v_abalance AS abalance;
END$$

-- simple-update: tpcb-like without the teller and branch updates; bid and
-- tid only go into the history row.
CREATE PROCEDURE pgbench_simple_update(IN p_aid INT, IN p_bid INT, IN p_tid INT, IN p_delta INT)
BEGIN
    DECLARE v_abalance INT;
    DECLARE EXIT HANDLER FOR SQLEXCEPTION
    BEGIN
        ROLLBACK;
        RESIGNAL;
    END;

    START TRANSACTION;
    UPDATE pgbench_accounts SET abalance = abalance + p_delta WHERE aid = p_aid;
    SELECT abalance INTO v_abalance FROM pgbench_accounts WHERE aid = p_aid;
    INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (p_tid, p_bid, p_aid, p_delta, CURRENT_TIMESTAMP);
    COMMIT;
    SELECT v_abalance AS abalance;
END$$

DELIMITER ;
