package db

import (
	"context"
	"errors"

	"github.com/sledge-bench/sledge/internal/workload"
)

// SQLOnly is embedded in a workload.SQLConn to provide the workload.Conn
// methods such a session answers by itself: Mode is client (the values
// are literals in the text), and Exec, QueryRow, Query and InTx refuse,
// since the workload's SQL (its BEGIN and COMMIT too) goes through
// ExecSQL and QuerySQL.
type SQLOnly struct {
	DB string // for messages: "mysql", "postgres", "sqlite"
}

// Mode is client: the text carries its values.
func (SQLOnly) Mode() workload.Mode { return workload.ModeClient }

// Exec refuses: named statements are not available in a SQL text session.
func (s SQLOnly) Exec(context.Context, string, ...any) (int64, error) {
	return 0, s.errNamed()
}

// QueryRow refuses: its row's Scan says named statements are not
// available in a SQL text session.
func (s SQLOnly) QueryRow(context.Context, string, ...any) workload.Row {
	return errRow{s.errNamed()}
}

// Query refuses: named statements are not available in a SQL text session.
func (s SQLOnly) Query(context.Context, string, ...any) (workload.Rows, error) {
	return nil, s.errNamed()
}

// InTx refuses: the workload's BEGIN and COMMIT go through ExecSQL.
func (s SQLOnly) InTx(context.Context, workload.TxOptions, func(context.Context) error) error {
	return errors.New(s.DB + ": InTx is not available in a SQL text session: BEGIN and COMMIT go through ExecSQL")
}

func (s SQLOnly) errNamed() error {
	return errors.New(s.DB + ": named statements are not available in a SQL text session")
}
