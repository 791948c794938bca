package postgres

import "github.com/sledge-bench/sledge/internal/workload"

// WithStatements gives a session that speaks the protocol itself (pgwire)
// statement texts of a test's own, in place of its workload's.
func WithStatements(c workload.Conn, text map[string]string) bool {
	sc, ok := c.(*stmtConn)
	if ok {
		sc.text = text
	}
	return ok
}

// TxStatus is the transaction status of a pgwire session's last
// ReadyForQuery ('I' idle, 'T' in a transaction, 'E' in a failed one).
func TxStatus(c workload.Conn) byte { return c.(*stmtConn).pw.tx }
