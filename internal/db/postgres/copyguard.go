package postgres

import (
	"encoding/binary"
	"errors"
	"io"
)

// errScriptCopy is pgbench's refusal of COPY in a script: libpq hands
// pgbench a COPY state it cannot serve, and pgbench aborts the client
// ("COPY is not supported in pgbench, aborting").
var errScriptCopy = errors.New("COPY is not supported in pgbench scripts")

// copyGuard sits between a script session's pgconn and its connection and
// watches the server's messages go by. pgconn has no COPY handling outside
// its CopyFrom/CopyTo calls: it skips the messages it does not know, so a
// script's COPY ... FROM STDIN would wait for data forever (the server
// waits for CopyData) and COPY ... TO STDOUT would pass as a success. On
// CopyInResponse the guard answers CopyFail itself (and Sync in the
// extended protocol, where the server ignores the Sync pgconn already
// sent while it was copying in), so the server ends the COPY with an
// error and the connection stays usable; any COPY is marked for the
// session to fail the command. In a pipeline the messages after the COPY
// are already on their way and an extra Sync would unbalance pgconn's
// count, so the guard ends the connection instead. It allocates nothing.
type copyGuard struct {
	r io.Reader
	w io.Writer

	extended bool // the session's protocol is not simple
	pipeline bool // a pipeline is open

	hdr  [5]byte // the message header being read: type, length
	nhdr int
	skip int // body bytes of the current message still to pass

	copied bool // a COPY started since the last take
	dead   bool // the connection was ended for a COPY in a pipeline
}

var (
	copyFail = copyFailMsg(errScriptCopy.Error())
	syncMsg  = []byte{'S', 0, 0, 0, 4}
)

// copyFailMsg is the frontend's CopyFail message with reason.
func copyFailMsg(reason string) []byte {
	b := []byte{'f', 0, 0, 0, 0}
	b = append(b, reason...)
	b = append(b, 0)
	binary.BigEndian.PutUint32(b[1:], uint32(len(b)-1))
	return b
}

func (g *copyGuard) Read(p []byte) (int, error) {
	if g.dead {
		return 0, errScriptCopy
	}
	n, err := g.r.Read(p)
	for i := 0; i < n; {
		if g.skip > 0 {
			k := min(g.skip, n-i)
			g.skip -= k
			i += k
			continue
		}
		g.hdr[g.nhdr] = p[i]
		g.nhdr++
		i++
		if g.nhdr < len(g.hdr) {
			continue
		}
		g.nhdr = 0
		g.skip = int(binary.BigEndian.Uint32(g.hdr[1:])) - 4
		switch g.hdr[0] {
		case 'G': // CopyInResponse
			g.copied = true
			if g.pipeline {
				g.dead = true
				return 0, errScriptCopy
			}
			if _, werr := g.w.Write(copyFail); werr != nil {
				return n, werr
			}
			if g.extended {
				if _, werr := g.w.Write(syncMsg); werr != nil {
					return n, werr
				}
			}
		case 'H', 'W': // CopyOutResponse, CopyBothResponse
			g.copied = true
		}
	}
	return n, err
}

// take reports whether a COPY started since the last call, and forgets it.
func (g *copyGuard) take() bool {
	c := g.copied
	g.copied = false
	return c
}
