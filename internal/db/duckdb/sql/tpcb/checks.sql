-- Consistency conditions of the tpcb workload (internal/workload/tpcb,
-- docs/tpcb.md part 5) for DuckDB. Each "check.<ID>" returns the number of
-- violations (0 = holds). Balances are integers: compared exactly.

-- name: check.1
-- sum(bbalance) = sum(tbalance): a tpcb-like moves one branch and one
-- teller by the same delta; nothing else moves either.
SELECT CASE WHEN (SELECT coalesce(sum(bbalance), 0) FROM pgbench_branches)
               = (SELECT coalesce(sum(tbalance), 0) FROM pgbench_tellers) THEN 0 ELSE 1 END;

-- name: check.2
-- sum(abalance) = sum(delta) of the history: tpcb-like and simple-update
-- each move one account by delta and write it to one history row.
SELECT CASE WHEN (SELECT coalesce(sum(abalance), 0) FROM pgbench_accounts)
               = (SELECT coalesce(sum(delta), 0) FROM pgbench_history) THEN 0 ELSE 1 END;

-- name: check.3
-- Per account: abalance = sum(delta) of its history rows (0 without any).
SELECT count(*) FROM pgbench_accounts a
LEFT JOIN (SELECT aid, sum(delta) AS s FROM pgbench_history GROUP BY aid) h ON h.aid = a.aid
WHERE a.abalance <> coalesce(h.s, 0);
