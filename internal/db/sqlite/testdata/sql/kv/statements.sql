-- name: item.get
SELECT i, f, s, n, ts FROM item WHERE id = ?1

-- name: item.raw
-- What is stored, as SQL literals: the same under both Go drivers.
SELECT quote(i) || ',' || quote(f) || ',' || quote(s) || ',' || quote(n) || ',' || quote(ts)
FROM item WHERE id = ?1

-- name: item.range
SELECT id, i, f, s, n, ts FROM item WHERE id BETWEEN ?1 AND ?2 ORDER BY id

-- name: item.add
INSERT INTO item (id, i, f, s, n, ts) VALUES (?1, ?2, ?3, ?4, ?5, ?6)

-- name: item.set_s
UPDATE item SET s = ?2 WHERE id = ?1

-- name: item.count
SELECT count(*) FROM item

-- name: counter.get
SELECT n FROM counter WHERE id = 1

-- name: counter.set
UPDATE counter SET n = ?1 WHERE id = 1;

-- name: counter.changed
SELECT changed FROM counter WHERE id = 1
