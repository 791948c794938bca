-- Test statements for the scan layer and the conflict test.

-- name: values
SELECT 12.34::DECIMAL(12,2), $2::DOUBLE, $1::SMALLINT, (SELECT sum(x) FROM (VALUES (1), (2), (3)) t(x)),
       $3, 12.34::DECIMAL(12,2), TIMESTAMP '2026-01-02 03:04:05', 3::TINYINT;

-- name: none
SELECT 1 WHERE false;

-- name: missing
INSERT INTO no_such_table VALUES (1);

-- name: bump
UPDATE counter SET v = v + 1 WHERE k = $1;
