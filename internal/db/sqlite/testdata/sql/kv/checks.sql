-- name: check.1
SELECT count(*) FROM counter WHERE n < 0
