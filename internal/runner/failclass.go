package runner

import (
	"errors"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/sledge-bench/sledge/internal/engine"
)

// MariaDB's error numbers that are pgbench's failure classes.
const (
	myDeadlock  = 1213 // ER_LOCK_DEADLOCK (SQLSTATE 40001, but a deadlock)
	myCheckRead = 1020 // ER_CHECKREAD: a snapshot-isolation write conflict
)

// FailClass sorts a failed transaction's error into pgbench's classes
// (--failures-detailed): PostgreSQL's SQLSTATE 40001 is a serialization
// failure and 40P01 a deadlock; MariaDB's deadlock (1213) is a deadlock,
// its snapshot-isolation conflict (1020) and any other SQLSTATE 40001 a
// serialization failure. Lock wait timeouts (PostgreSQL 55P03, MariaDB
// 1205, SQLite's busy) are neither: pgbench retries and classifies only
// the two classes.
func FailClass(err error) engine.FailClass {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch pe.Code {
		case "40001":
			return engine.FailSerialization
		case "40P01":
			return engine.FailDeadlock
		}
		return engine.FailOther
	}
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		switch {
		case me.Number == myDeadlock:
			return engine.FailDeadlock
		case me.Number == myCheckRead || string(me.SQLState[:]) == "40001":
			return engine.FailSerialization
		}
	}
	return engine.FailOther
}
