package postgres

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// pgbench's words for what the server says (`sledge pgbench`): libpq's
// message for an error at its default verbosity, and pgbench 15's setup
// connection before a run.

// LibpqMessage is a server error in err as libpq prints it (PQerrorMessage
// at the default verbosity, which pgbench prints): "ERROR:  message", the
// position of the error in query as "LINE n: …" with a caret under it (or
// " at character n" when the query is not known), then the DETAIL, HINT,
// QUERY and CONTEXT lines the server sent. No final newline. False when
// err holds no server error.
func LibpqMessage(err error, query string) (string, bool) {
	var pe *pgconn.PgError
	if !errors.As(err, &pe) {
		return "", false
	}
	var b strings.Builder
	b.WriteString(pe.Severity + ":  " + pe.Message)
	text, pos := "", 0
	switch {
	case pe.Position > 0 && query != "":
		text, pos = query, int(pe.Position)
	case pe.Position > 0:
		fmt.Fprintf(&b, " at character %d", pe.Position)
	case pe.InternalPosition > 0 && pe.InternalQuery != "":
		text, pos = pe.InternalQuery, int(pe.InternalPosition)
	case pe.InternalPosition > 0:
		fmt.Fprintf(&b, " at character %d", pe.InternalPosition)
	}
	b.WriteByte('\n')
	if text != "" {
		errorPosition(&b, text, pos)
	}
	for _, f := range []struct{ label, val string }{
		{"DETAIL", pe.Detail}, {"HINT", pe.Hint}, {"QUERY", pe.InternalQuery}, {"CONTEXT", pe.Where},
	} {
		if f.val != "" {
			b.WriteString(f.label + ":  " + f.val + "\n")
		}
	}
	return strings.TrimSuffix(b.String(), "\n"), true
}

// errorPosition writes libpq's cursor display (reportErrorPosition): the
// line of query holding character pos (from 1) as "LINE n: …", cut to
// about 60 columns around the position with "..." where cut, and a caret
// under the character. Tabs count as spaces; every character is one
// column wide.
func errorPosition(b *strings.Builder, query string, pos int) {
	const displaySize, minRightCut = 60, 10
	q := []rune(query)
	loc := pos - 1
	if loc < 0 {
		return
	}
	line, beg, end := 1, 0, -1
	n := 0
	for ; n < len(q); n++ {
		switch c := q[n]; c {
		case '\t':
			q[n] = ' '
		case '\r', '\n':
			if n < loc {
				if c == '\r' || n == 0 || q[n-1] != '\r' {
					line++
				}
				beg = n + 1
			} else {
				end = n
			}
		}
		if end >= 0 {
			break
		}
	}
	if end < 0 {
		end = n
	}
	if loc > n {
		return
	}
	begCut, endCut := false, false
	if end-beg > displaySize {
		if beg+displaySize >= loc+minRightCut {
			end, endCut = beg+displaySize, true
		} else {
			for loc+minRightCut < end {
				end, endCut = end-1, true
			}
			for end-beg > displaySize {
				beg, begCut = beg+1, true
			}
		}
	}
	prefix := fmt.Sprintf("LINE %d: ", line)
	if begCut {
		prefix += "..."
	}
	b.WriteString(prefix + string(q[beg:end]))
	if endCut {
		b.WriteString("...")
	}
	b.WriteString("\n" + strings.Repeat(" ", len(prefix)+loc-beg) + "^\n")
}

// pgbConnMessage is a failed connection as libpq says it: "connection to
// server on socket "…" failed: …" (or "at "host", port n"), then the
// server's message, or the reason and libpq's hint.
func (d *DB) pgbConnMessage(ctx context.Context, err error) string {
	port := strconv.Itoa(int(d.cfg.Port))
	var where string
	if d.transport() == "unix" {
		where = fmt.Sprintf("connection to server on socket \"%s/.s.PGSQL.%s\" failed: ", d.cfg.Host, port)
	} else if net.ParseIP(d.cfg.Host) != nil {
		where = fmt.Sprintf("connection to server at \"%s\", port %s failed: ", d.cfg.Host, port)
	} else {
		addr := d.cfg.Host
		if addrs, lerr := net.DefaultResolver.LookupHost(ctx, d.cfg.Host); lerr == nil && len(addrs) > 0 {
			addr = addrs[0]
		}
		where = fmt.Sprintf("connection to server at \"%s\" (%s), port %s failed: ", d.cfg.Host, addr, port)
	}
	if msg, ok := LibpqMessage(err, ""); ok {
		return where + msg
	}
	switch {
	case errors.Is(err, errConnRefused) && d.transport() == "unix":
		return where + "Connection refused\n\tIs the server running locally and accepting connections on that socket?"
	case errors.Is(err, errConnRefused):
		return where + "Connection refused\n\tIs the server running on that host and accepting TCP/IP connections?"
	case errors.Is(err, errNoSocket):
		return where + "No such file or directory\n\tIs the server running locally and accepting connections on that socket?"
	}
	return where + lastPart(err.Error())
}

// PgbenchSetup is what pgbench 15 does on its setup connection before a
// run, beside printing its version: connect; with a builtin script, count
// pgbench_branches (the scale); unless -n, vacuum.
type PgbenchSetup struct {
	Builtin    bool   // a builtin script runs: count pgbench_branches
	ScaleGiven bool   // -s was given: pgbench warns that the count wins
	Vacuum     bool   // not -n
	Accounts   bool   // -v: vacuum pgbench_accounts too
	Prefix     string // the program's name for its messages ("sledge pgbench: ")
}

// PgbenchSetup does o's setup on its own connection, saying on w what
// pgbench says there: a failed connection, pgbench_branches that cannot
// be counted (with pgbench's hint when it does not exist), the scale
// warning, "starting vacuum...end." and the statements that failed
// (pgbench ignores those). False: pgbench would exit 1 there (or ctx
// ended).
func (d *DB) PgbenchSetup(ctx context.Context, o PgbenchSetup, w io.Writer) bool {
	c, err := d.connect(ctx, d.cfg, pgx.QueryExecModeSimpleProtocol)
	if err != nil {
		if ctx.Err() == nil {
			fmt.Fprintf(w, "%serror: %s\n%serror: could not create connection for setup\n", o.Prefix, d.pgbConnMessage(ctx, err), o.Prefix)
		}
		return false
	}
	defer c.Close(context.WithoutCancel(ctx))
	pc := c.PgConn()
	if o.Builtin {
		const count = "select count(*) from pgbench_branches"
		res, err := pc.Exec(ctx, count).ReadAll()
		if err != nil {
			if ctx.Err() != nil {
				return false
			}
			msg, ok := LibpqMessage(err, count)
			if !ok {
				msg = err.Error()
			}
			fmt.Fprintf(w, "%serror: could not count number of branches: %s\n", o.Prefix, msg)
			var pe *pgconn.PgError
			if errors.As(err, &pe) && pe.Code == codeUndefinedTab {
				fmt.Fprintf(w, "%shint: Perhaps you need to do initialization (\"pgbench -i\") in database \"%s\".\n", o.Prefix, d.cfg.Database)
			}
			return false
		}
		if o.ScaleGiven {
			n := "0"
			if len(res) > 0 && len(res[0].Rows) > 0 && len(res[0].Rows[0]) > 0 {
				n = string(res[0].Rows[0][0])
			}
			fmt.Fprintf(w, "%swarning: scale option ignored, using count from pgbench_branches table (%s)\n", o.Prefix, n)
		}
	}
	if !o.Vacuum {
		return true
	}
	try := func(q string) {
		if _, err := pc.Exec(ctx, q).ReadAll(); err != nil && ctx.Err() == nil {
			msg, ok := LibpqMessage(err, q)
			if !ok {
				msg = err.Error()
			}
			fmt.Fprintf(w, "%serror: %s\n%sdetail: (ignoring this error and continuing anyway)\n", o.Prefix, msg, o.Prefix)
		}
	}
	fmt.Fprint(w, "starting vacuum...")
	try("vacuum pgbench_branches")
	try("vacuum pgbench_tellers")
	try("truncate pgbench_history")
	fmt.Fprintln(w, "end.")
	if o.Accounts {
		fmt.Fprint(w, "starting vacuum pgbench_accounts...")
		try("vacuum analyze pgbench_accounts")
		fmt.Fprintln(w, "end.")
	}
	return ctx.Err() == nil
}
