package postgres

import "github.com/sledge-bench/sledge/internal/workload"

// WithStatements gives a session that speaks the protocol itself (pgwire)
// statement texts of a test's own, in place of its workload's.
func WithStatements(c workload.Conn, text map[string]string) bool {
	switch c := c.(type) {
	case *stmtConn:
		c.text = text
		return true
	case *conn:
		c.text = text // for comparisons with pgconn's path
	}
	return false
}

// TxStatus is the transaction status of a pgwire session's last
// ReadyForQuery ('I' idle, 'T' in a transaction, 'E' in a failed one).
func TxStatus(c workload.Conn) byte { return c.(*stmtConn).pw.tx }
