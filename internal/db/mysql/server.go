package mysql

import (
	"context"
	"database/sql"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"

	"github.com/sledge-bench/sledge/internal/db"
)

// The server's side of the cost (docs/cost.md, "Server side").

var (
	_ db.ServerCoster    = (*DB)(nil)
	_ db.ServerSessioner = (*conn)(nil)
	_ db.ServerSessioner = (*scriptConn)(nil)
)

// ServerSession asks the server for the session's connection id: one
// round trip, when the session opens (the driver does not keep the id of
// its handshake).
func (c *conn) ServerSession(ctx context.Context) (int64, error) {
	return sessionID(ctx, c.c)
}

// ServerSession is the script session's connection id.
func (c *scriptConn) ServerSession(ctx context.Context) (int64, error) {
	return sessionID(ctx, c.c)
}

func sessionID(ctx context.Context, c *sql.Conn) (int64, error) {
	var id int64
	if err := c.QueryRowContext(ctx, "SELECT CONNECTION_ID()").Scan(&id); err != nil {
		return 0, fmt.Errorf("mysql: connection id: %w", err)
	}
	return id, nil
}

// OpenServerProbe holds a connection of the pool for the run's readings
// and finds the server's process from its pid file.
func (d *DB) OpenServerProbe(ctx context.Context) (db.ServerProbe, error) {
	c, err := d.pool.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("mysql: server probe: %w", d.connErr(err))
	}
	p := &myProbe{c: c, host: d.cfg.drv.Addr}
	if d.cfg.transport == "tcp" {
		if h, _, err := net.SplitHostPort(d.cfg.drv.Addr); err == nil {
			p.host = h
		}
	}
	var pidFile string
	var pfs sql.NullString
	p.sent++
	err = c.QueryRowContext(ctx, "SELECT /* "+db.ProbeMarker+" */ @@pid_file, @@performance_schema").Scan(&pidFile, &pfs)
	if err != nil {
		_ = c.Close()
		return nil, fmt.Errorf("mysql: server probe: %w", d.connErr(err))
	}
	p.perfSchema = pfs.String == "1" || strings.EqualFold(pfs.String, "ON")
	// A pid file we cannot read leaves the pid unknown: no CPU, said so.
	if b, err := os.ReadFile(pidFile); err == nil {
		p.pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
	}
	return p, nil
}

type myProbe struct {
	c          *sql.Conn
	host       string
	pid        int
	perfSchema bool
	sent       int64
	noTrx      bool // INNODB_TRX could not be read (privileges): no row-lock waits
}

func (p *myProbe) Host() string { return p.host }
func (p *myProbe) Sent() int64  { return p.sent }
func (p *myProbe) Close() error { return p.c.Close() }

func (p *myProbe) WaitSource() string {
	s := "information_schema.PROCESSLIST (Command, State) of the virtual users' sessions"
	if !p.noTrx {
		s += ", INNODB_TRX lock waits"
	}
	if p.perfSchema {
		s += "; performance_schema is ON but its waits are not read yet"
	}
	return s
}

// myStatus are the global status counters read at both edges. Every
// session counts in them, the probe's own included.
var myStatus = []string{"Questions", "Com_stmt_prepare", "Com_stmt_execute", "Com_commit", "Com_rollback",
	"Com_call_procedure", "Com_select", "Com_insert", "Com_update", "Com_delete",
	"Innodb_rows_read", "Innodb_rows_inserted", "Innodb_rows_updated", "Innodb_rows_deleted",
	"Innodb_buffer_pool_read_requests", "Innodb_buffer_pool_reads"}

// Counters reads SHOW GLOBAL STATUS. statements is Questions (statements
// sent by clients, a prepared statement's executions included; not those
// inside procedures); parses are the statements that arrived as text plus
// the prepares: Questions − Com_stmt_execute + Com_stmt_prepare.
func (p *myProbe) Counters(ctx context.Context) (db.ServerCounters, error) {
	out := db.ServerCounters{Values: map[string]int64{}, Sources: map[string]string{}, Missing: map[string]string{}}
	p.sent++
	rows, err := p.c.QueryContext(ctx, "SHOW /* "+db.ProbeMarker+" */ GLOBAL STATUS WHERE Variable_name IN ('"+strings.Join(myStatus, "', '")+"')")
	if err != nil {
		return out, fmt.Errorf("mysql: global status: %w", err)
	}
	defer rows.Close()
	vals := map[string]int64{}
	for rows.Next() {
		var name string
		var v int64
		if err := rows.Scan(&name, &v); err != nil {
			return out, fmt.Errorf("mysql: global status: %w", err)
		}
		vals[strings.ToLower(name)] = v
	}
	if err := rows.Err(); err != nil {
		return out, fmt.Errorf("mysql: global status: %w", err)
	}
	for _, k := range myStatus {
		v, ok := vals[strings.ToLower(k)]
		if !ok {
			continue
		}
		out.Values[k] = v
		out.Sources[k] = "global status: every session"
	}
	q, ok1 := vals["questions"]
	ex, ok2 := vals["com_stmt_execute"]
	pr, ok3 := vals["com_stmt_prepare"]
	if ok1 {
		out.Values["statements"] = q
		out.Sources["statements"] = "global status Questions (statements from clients, not inside procedures; every session, less sledge's own readings)"
	}
	if ok1 && ok2 && ok3 {
		out.Values["parses"] = q - ex + pr
		out.Sources["parses"] = "global status Questions − Com_stmt_execute + Com_stmt_prepare: statements sent as text, and prepares (a procedure's body is parsed once per session)"
	}
	out.Missing["plans"] = "MariaDB/MySQL count no plans"
	return out, nil
}

// Sample reads the processlist rows of the virtual users' sessions, with
// their InnoDB transaction's state, which tells a row-lock wait.
func (p *myProbe) Sample(ctx context.Context, sessions []int64) (db.WaitSample, []db.ServerProcess, error) {
	var w db.WaitSample
	var procs []db.ServerProcess
	if p.pid > 0 {
		procs = []db.ServerProcess{{PID: p.pid, Role: "server", Threads: true}}
	}
	if len(sessions) == 0 {
		return w, procs, nil
	}
	ids := make([]string, len(sessions))
	for i, s := range sessions {
		ids[i] = strconv.FormatInt(s, 10)
	}
	in := strings.Join(ids, ",")
	q := "SELECT /* " + db.ProbeMarker + " */ p.COMMAND, coalesce(p.STATE, ''), coalesce(t.trx_state, '') FROM information_schema.PROCESSLIST p" +
		" LEFT JOIN information_schema.INNODB_TRX t ON t.trx_mysql_thread_id = p.ID WHERE p.ID IN (" + in + ")"
	if p.noTrx {
		q = "SELECT /* " + db.ProbeMarker + " */ COMMAND, coalesce(STATE, ''), '' FROM information_schema.PROCESSLIST WHERE ID IN (" + in + ")"
	}
	p.sent++
	rows, err := p.c.QueryContext(ctx, q)
	if err != nil && !p.noTrx {
		p.noTrx = true
		return p.Sample(ctx, sessions)
	}
	if err != nil {
		return w, procs, fmt.Errorf("mysql: sample processlist: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var command, state, trx string
		if err := rows.Scan(&command, &state, &trx); err != nil {
			return w, procs, fmt.Errorf("mysql: sample processlist: %w", err)
		}
		classifyMy(&w, command, state, trx)
	}
	if err := rows.Err(); err != nil {
		return w, procs, fmt.Errorf("mysql: sample processlist: %w", err)
	}
	return w, procs, nil
}

// classifyMy puts one session's processlist row into the sample's
// classes. Without performance_schema, waiting for the disk looks like
// running: it counts as CPU.
func classifyMy(w *db.WaitSample, command, state, trx string) {
	st := strings.ToLower(state)
	switch {
	case command == "Sleep" || strings.Contains(st, "net") || strings.Contains(st, "sending to client"):
		w.Client++ // between statements, or reading from / writing to the client
	case strings.EqualFold(trx, "LOCK WAIT") || strings.Contains(st, "lock"):
		w.Lock++
	case command == "Query" || command == "Execute" || command == "Prepare" || command == "Fetch":
		w.CPU++
	default:
		w.Other++
	}
}
