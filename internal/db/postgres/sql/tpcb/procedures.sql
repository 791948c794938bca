-- pgbench's tpcb-like and simple-update builtins as server-side routines
-- for procedure mode (the <tx>.call contract in
-- internal/workload/tpcb/stmts.go): the builtin's statements, in its order,
-- with its variables as arguments, returning the balance its SELECT read.
-- A call is one transaction: the server runs the SELECT (or CALL) in
-- autocommit, so the routine's changes commit together or not at all, as
-- between the client's BEGIN and END.
--
-- FUNCTIONs are called with SELECT pgbench_tpcb_like($1, …) (the default);
-- with routines=procedures in the URL, PROCEDUREs of the same names are
-- called with CALL, the balance in a trailing INOUT argument. Each
-- procedure calls its function, so the logic exists once.

CREATE OR REPLACE FUNCTION pgbench_tpcb_like(p_aid int, p_bid int, p_tid int, p_delta int)
RETURNS int LANGUAGE plpgsql AS $$
DECLARE
    v_abalance int;
BEGIN
    UPDATE pgbench_accounts SET abalance = abalance + p_delta WHERE aid = p_aid;
    SELECT abalance INTO v_abalance FROM pgbench_accounts WHERE aid = p_aid;
    UPDATE pgbench_tellers SET tbalance = tbalance + p_delta WHERE tid = p_tid;
    UPDATE pgbench_branches SET bbalance = bbalance + p_delta WHERE bid = p_bid;
    INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (p_tid, p_bid, p_aid, p_delta, CURRENT_TIMESTAMP);
    RETURN v_abalance;
END;
$$;

-- simple-update: tpcb-like without the teller and branch updates; bid and
-- tid only go into the history row.
CREATE OR REPLACE FUNCTION pgbench_simple_update(p_aid int, p_bid int, p_tid int, p_delta int)
RETURNS int LANGUAGE plpgsql AS $$
DECLARE
    v_abalance int;
BEGIN
    UPDATE pgbench_accounts SET abalance = abalance + p_delta WHERE aid = p_aid;
    SELECT abalance INTO v_abalance FROM pgbench_accounts WHERE aid = p_aid;
    INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (p_tid, p_bid, p_aid, p_delta, CURRENT_TIMESTAMP);
    RETURN v_abalance;
END;
$$;

CREATE OR REPLACE PROCEDURE pgbench_tpcb_like(p_aid int, p_bid int, p_tid int, p_delta int, INOUT abalance int)
LANGUAGE plpgsql AS $$
BEGIN
    abalance := pgbench_tpcb_like(p_aid, p_bid, p_tid, p_delta);
END;
$$;

CREATE OR REPLACE PROCEDURE pgbench_simple_update(p_aid int, p_bid int, p_tid int, p_delta int, INOUT abalance int)
LANGUAGE plpgsql AS $$
BEGIN
    abalance := pgbench_simple_update(p_aid, p_bid, p_tid, p_delta);
END;
$$;
