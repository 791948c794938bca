package mysql

import (
	"context"
	"crypto/sha1"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"net"
	"strconv"
	"time"
	"unsafe"

	"github.com/go-sql-driver/mysql"
)

// sledge's own client side of the MariaDB/MySQL protocol, for the hot
// path (issue 26): the handshake with mysql_native_password, COM_QUERY
// for BEGIN/COMMIT/ROLLBACK and session settings, and the binary protocol
// of prepared statements (COM_STMT_PREPARE once per statement and
// connection, COM_STMT_EXECUTE with binary parameters). A call writes its
// packet into one reused buffer (one write) and reads the response from
// one reused read buffer; result rows are decoded from that buffer
// straight into the caller's destinations (binconn.go), so a call
// allocates nothing. Everything else stays with go-sql-driver/mysql.

// Commands.
const (
	comQuit        = 0x01
	comQuery       = 0x03
	comStmtPrepare = 0x16
	comStmtExecute = 0x17
)

// Capability flags.
const (
	capLongPassword   = 0x1
	capLongFlag       = 0x4
	capConnectWithDB  = 0x8
	capProtocol41     = 0x200
	capSSL            = 0x800
	capTransactions   = 0x2000
	capSecureConn     = 0x8000
	capMultiResults   = 0x20000
	capPSMultiResults = 0x40000
	capPluginAuth     = 0x80000

	clientCaps = capLongPassword | capLongFlag | capProtocol41 | capTransactions | capSecureConn |
		capMultiResults | capPSMultiResults | capPluginAuth
)

const (
	statusMoreResults = 0x0008 // SERVER_MORE_RESULTS_EXISTS
	flagUnsigned      = 0x20   // column flag
	utf8mb4GeneralCI  = 45     // the collation go-sql-driver/mysql asks for by default
	maxPayload        = 1<<24 - 1
	nativePassword    = "mysql_native_password"
)

// Column types.
const (
	typeDecimal    = 0x00
	typeTiny       = 0x01
	typeShort      = 0x02
	typeLong       = 0x03
	typeFloat      = 0x04
	typeDouble     = 0x05
	typeNull       = 0x06
	typeTimestamp  = 0x07
	typeLongLong   = 0x08
	typeInt24      = 0x09
	typeDate       = 0x0a
	typeTime       = 0x0b
	typeDatetime   = 0x0c
	typeYear       = 0x0d
	typeNewDate    = 0x0e
	typeTimestamp2 = 0x11
	typeDatetime2  = 0x12
	typeTime2      = 0x13
	typeString     = 0xfe
)

// errUnsupported marks a server or URL that sledge's session does not
// speak to (TLS, an authentication plugin other than
// mysql_native_password): Connect falls back to go-sql-driver/mysql.
var errUnsupported = errors.New("not supported by sledge's MariaDB session")

// errMalformed is a packet shorter than its contents say.
var errMalformed = fmt.Errorf("%w: malformed packet", mysql.ErrInvalidConn)

// proto is one connection's packet reader and writer.
type proto struct {
	nc         net.Conn
	rb         []byte // read buffer: rb[rpos:rend] is read and not yet used
	rpos, rend int
	wb         []byte // the packet being written
	seq        byte
	status     uint16 // of the last OK or EOF packet
	id         uint32 // the server's connection id (handshake)
	version    string
	err        error // the first I/O or protocol error: the connection is unusable
}

func newProto(nc net.Conn) *proto {
	return &proto{nc: nc, rb: make([]byte, 16<<10), wb: make([]byte, 0, 1<<10)}
}

// fail records err as the connection's end and closes it.
func (p *proto) fail(err error) error {
	if p.err == nil {
		p.err = err
		_ = p.nc.Close()
	}
	return err
}

// fill makes rb[rpos:] hold at least need bytes.
func (p *proto) fill(need int) error {
	if p.rend-p.rpos >= need {
		return nil
	}
	if p.rpos > 0 {
		p.rend = copy(p.rb, p.rb[p.rpos:p.rend])
		p.rpos = 0
	}
	if need > len(p.rb) {
		nb := make([]byte, max(need, 2*len(p.rb)))
		copy(nb, p.rb[:p.rend])
		p.rb = nb
	}
	for p.rend < need {
		n, err := p.nc.Read(p.rb[p.rend:])
		p.rend += n
		if p.rend >= need {
			break
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// readPacket returns the next packet's payload, valid until the next
// read.
func (p *proto) readPacket() ([]byte, error) {
	if p.err != nil {
		return nil, p.err
	}
	if err := p.fill(4); err != nil {
		return nil, p.fail(err)
	}
	h := p.rb[p.rpos : p.rpos+4]
	n := int(h[0]) | int(h[1])<<8 | int(h[2])<<16
	seq := h[3]
	if n == maxPayload {
		return nil, p.fail(fmt.Errorf("%w: a packet of 16 MiB or more, which sledge's session does not read", mysql.ErrInvalidConn))
	}
	if err := p.fill(4 + n); err != nil {
		return nil, p.fail(err)
	}
	pkt := p.rb[p.rpos+4 : p.rpos+4+n]
	p.rpos += 4 + n
	if seq != p.seq {
		// The server's last word before it closes the connection (KILL,
		// shutdown) comes out of sequence.
		if len(pkt) > 0 && pkt[0] == 0xff {
			return nil, p.fail(parseErr(pkt))
		}
		return nil, p.fail(fmt.Errorf("%w: packet %d out of sequence, want %d", mysql.ErrInvalidConn, seq, p.seq))
	}
	p.seq++
	return pkt, nil
}

// start begins a command packet.
func (p *proto) start(cmd byte) {
	p.wb = append(p.wb[:0], 0, 0, 0, 0, cmd)
	p.seq = 0
}

// send writes the packet in wb.
func (p *proto) send() error {
	if p.err != nil {
		return p.err
	}
	n := len(p.wb) - 4
	if n >= maxPayload {
		return fmt.Errorf("mysql: a statement of 16 MiB or more, which sledge's session does not send")
	}
	p.wb[0], p.wb[1], p.wb[2], p.wb[3] = byte(n), byte(n>>8), byte(n>>16), p.seq
	p.seq++
	if _, err := p.nc.Write(p.wb); err != nil {
		return p.fail(err)
	}
	return nil
}

// parseErr turns an ERR packet into the driver's error value, which the
// package classifies (kind, FailClass, lostConnection).
func parseErr(pkt []byte) error {
	if len(pkt) < 3 {
		return errMalformed
	}
	e := &mysql.MySQLError{Number: binary.LittleEndian.Uint16(pkt[1:3])}
	msg := pkt[3:]
	if len(msg) >= 6 && msg[0] == '#' {
		copy(e.SQLState[:], msg[1:6])
		msg = msg[6:]
	}
	e.Message = string(msg)
	return e
}

// lenenc reads a length-encoded integer at b[pos:].
func lenenc(b []byte, pos int) (v uint64, next int, null bool, err error) {
	if pos >= len(b) {
		return 0, pos, false, errMalformed
	}
	switch c := b[pos]; {
	case c < 0xfb:
		return uint64(c), pos + 1, false, nil
	case c == 0xfb:
		return 0, pos + 1, true, nil
	case c == 0xfc && pos+3 <= len(b):
		return uint64(binary.LittleEndian.Uint16(b[pos+1:])), pos + 3, false, nil
	case c == 0xfd && pos+4 <= len(b):
		return uint64(b[pos+1]) | uint64(b[pos+2])<<8 | uint64(b[pos+3])<<16, pos + 4, false, nil
	case c == 0xfe && pos+9 <= len(b):
		return binary.LittleEndian.Uint64(b[pos+1:]), pos + 9, false, nil
	}
	return 0, pos, false, errMalformed
}

// lenencBytes reads a length-encoded string at b[pos:].
func lenencBytes(b []byte, pos int) ([]byte, int, error) {
	n, pos, _, err := lenenc(b, pos)
	if err != nil {
		return nil, pos, err
	}
	if uint64(len(b)-pos) < n {
		return nil, pos, errMalformed
	}
	return b[pos : pos+int(n)], pos + int(n), nil
}

func appendLenenc(b []byte, n uint64) []byte {
	switch {
	case n < 0xfb:
		return append(b, byte(n))
	case n < 1<<16:
		return append(b, 0xfc, byte(n), byte(n>>8))
	case n < 1<<24:
		return append(b, 0xfd, byte(n), byte(n>>8), byte(n>>16))
	}
	return binary.LittleEndian.AppendUint64(append(b, 0xfe), n)
}

// ok reads an OK packet: the rows affected and the status.
func (p *proto) ok(pkt []byte) (int64, error) {
	n, pos, _, err := lenenc(pkt, 1)
	if err == nil {
		_, pos, _, err = lenenc(pkt, pos) // last insert id
	}
	if err != nil || pos+2 > len(pkt) {
		return 0, p.fail(errMalformed)
	}
	p.status = binary.LittleEndian.Uint16(pkt[pos:])
	return int64(n), nil
}

// isEOF tells an EOF packet (0xfe, shorter than 9 bytes) from a row.
func isEOF(pkt []byte) bool { return len(pkt) > 0 && pkt[0] == 0xfe && len(pkt) < 9 }

func (p *proto) eof(pkt []byte) {
	if len(pkt) >= 5 {
		p.status = binary.LittleEndian.Uint16(pkt[3:])
	}
}

// column is what a result column's definition says that decoding needs.
type column struct {
	typ      byte
	flags    uint16
	decimals byte
}

// header reads the start of a result: an OK (0 columns; affected rows
// and status read), an ERR, or a result set's column definitions into
// cols (reused) up to their EOF.
func (p *proto) header(cols []column) (ncols int, affected int64, _ []column, err error) {
	pkt, err := p.readPacket()
	if err != nil {
		return 0, 0, cols, err
	}
	switch pkt[0] {
	case 0x00:
		n, err := p.ok(pkt)
		return 0, n, cols, err
	case 0xff:
		return 0, 0, cols, parseErr(pkt)
	case 0xfb:
		return 0, 0, cols, p.fail(fmt.Errorf("%w: LOCAL INFILE request", mysql.ErrInvalidConn))
	}
	n, _, _, err := lenenc(pkt, 0)
	if err != nil {
		return 0, 0, cols, p.fail(err)
	}
	cols = cols[:0]
	for range n {
		if pkt, err = p.readPacket(); err != nil {
			return 0, 0, cols, err
		}
		// catalog, schema, table, org_table, name, org_name, then the
		// fixed-length fields' length (0x0c).
		pos := 0
		for range 6 {
			if _, pos, err = lenencBytes(pkt, pos); err != nil {
				return 0, 0, cols, p.fail(err)
			}
		}
		if pos+11 > len(pkt) {
			return 0, 0, cols, p.fail(errMalformed)
		}
		f := pkt[pos+1:] // charset 2, length 4, type 1, flags 2, decimals 1
		cols = append(cols, column{typ: f[6], flags: binary.LittleEndian.Uint16(f[7:]), decimals: f[9]})
	}
	if pkt, err = p.readPacket(); err != nil {
		return 0, 0, cols, err
	}
	if !isEOF(pkt) {
		return 0, 0, cols, p.fail(fmt.Errorf("%w: no EOF after the column definitions", mysql.ErrInvalidConn))
	}
	return int(n), 0, cols, nil
}

// row returns the current result set's next row, nil after its last (its
// EOF read), or the ERR that ended it.
func (p *proto) row() ([]byte, error) {
	pkt, err := p.readPacket()
	if err != nil {
		return nil, err
	}
	if isEOF(pkt) {
		p.eof(pkt)
		return nil, nil
	}
	if pkt[0] == 0xff {
		return nil, parseErr(pkt)
	}
	return pkt, nil
}

// finish reads and drops the rest of a response after its current result
// (whose rows are still to read when inRows): further rows, and further
// results while the server says more exist (a CALL's final OK). It
// returns the rows affected by the last OK and the first error.
func (p *proto) finish(inRows bool, affected int64, cols []column) (int64, []column, error) {
	var first error
	for {
		if inRows {
			for {
				r, err := p.row()
				if err != nil {
					if p.err != nil {
						return affected, cols, err
					}
					first = cmpErr(first, err)
					break // an ERR ends the response
				}
				if r == nil {
					break
				}
			}
			if first != nil {
				return affected, cols, first
			}
		}
		if p.status&statusMoreResults == 0 {
			return affected, cols, first
		}
		var n int
		var err error
		n, affected, cols, err = p.header(cols)
		if err != nil {
			return affected, cols, cmpErr(first, err)
		}
		inRows = n > 0
	}
}

func cmpErr(first, err error) error {
	if first != nil {
		return first
	}
	return err
}

// handshake reads the server's greeting and logs in with
// mysql_native_password (the only plugin sledge's session speaks: others
// are errUnsupported).
func (p *proto) handshake(cfg *mysql.Config) error {
	pkt, err := p.readPacket()
	if err != nil {
		return err
	}
	if pkt[0] == 0xff {
		return p.fail(parseErr(pkt))
	}
	if pkt[0] != 10 {
		return p.fail(fmt.Errorf("%w: handshake protocol %d", errUnsupported, pkt[0]))
	}
	pos := 1
	end := indexZero(pkt, pos)
	if end < 0 || end+1+4+8+1+2 > len(pkt) {
		return p.fail(errMalformed)
	}
	p.version = string(pkt[pos:end])
	pos = end + 1
	p.id = binary.LittleEndian.Uint32(pkt[pos:])
	pos += 4
	seed := make([]byte, 0, 20)
	seed = append(seed, pkt[pos:pos+8]...)
	pos += 9
	caps := uint32(binary.LittleEndian.Uint16(pkt[pos:]))
	pos += 2
	plugin := nativePassword
	if len(pkt) >= pos+16 {
		caps |= uint32(binary.LittleEndian.Uint16(pkt[pos+3:])) << 16
		authLen := int(pkt[pos+5])
		pos += 16
		if caps&capSecureConn != 0 {
			n := max(13, authLen-8)
			if pos+n > len(pkt) {
				return p.fail(errMalformed)
			}
			seed = append(seed, pkt[pos:pos+n-1]...) // 12 bytes and a NUL
			pos += n
		}
		if caps&capPluginAuth != 0 && pos < len(pkt) {
			if end := indexZero(pkt, pos); end >= 0 {
				plugin = string(pkt[pos:end])
			} else {
				plugin = string(pkt[pos:])
			}
		}
	}
	if caps&capProtocol41 == 0 || caps&capSecureConn == 0 {
		return p.fail(fmt.Errorf("%w: a server without protocol 4.1", errUnsupported))
	}
	_ = plugin // answered as mysql_native_password: the server switches when it wants another
	want := uint32(clientCaps)
	if cfg.DBName != "" {
		want |= capConnectWithDB
	}
	p.wb = append(p.wb[:0], 0, 0, 0, 0)
	p.wb = binary.LittleEndian.AppendUint32(p.wb, want&(caps|capConnectWithDB))
	p.wb = binary.LittleEndian.AppendUint32(p.wb, 0) // max packet: the server's
	p.wb = append(p.wb, utf8mb4GeneralCI)
	p.wb = append(p.wb, make([]byte, 23)...)
	p.wb = append(append(p.wb, cfg.User...), 0)
	auth := scramble(seed, cfg.Passwd)
	p.wb = append(append(p.wb, byte(len(auth))), auth...)
	if cfg.DBName != "" {
		p.wb = append(append(p.wb, cfg.DBName...), 0)
	}
	p.wb = append(append(p.wb, nativePassword...), 0)
	if err := p.send(); err != nil {
		return err
	}
	for {
		pkt, err := p.readPacket()
		if err != nil {
			return err
		}
		switch pkt[0] {
		case 0x00:
			_, err := p.ok(pkt)
			return err
		case 0xff:
			return p.fail(parseErr(pkt))
		case 0xfe: // auth switch request: plugin name, NUL, seed
			end := indexZero(pkt, 1)
			if end < 0 {
				return p.fail(errMalformed)
			}
			if name := string(pkt[1:end]); name != nativePassword {
				return p.fail(fmt.Errorf("%w: authentication plugin %s", errUnsupported, name))
			}
			s := pkt[end+1:]
			if len(s) > 0 && s[len(s)-1] == 0 {
				s = s[:len(s)-1]
			}
			p.wb = append(append(p.wb[:0], 0, 0, 0, 0), scramble(s, cfg.Passwd)...)
			if err := p.send(); err != nil {
				return err
			}
		default: // 0x01: more data for a plugin sledge does not speak
			return p.fail(fmt.Errorf("%w: authentication exchange 0x%02x", errUnsupported, pkt[0]))
		}
	}
}

func indexZero(b []byte, from int) int {
	for i := from; i < len(b); i++ {
		if b[i] == 0 {
			return i
		}
	}
	return -1
}

// scramble is mysql_native_password's answer to seed:
// SHA1(password) XOR SHA1(seed + SHA1(SHA1(password))).
func scramble(seed []byte, password string) []byte {
	if password == "" {
		return nil
	}
	s1 := sha1.Sum([]byte(password))
	s2 := sha1.Sum(s1[:])
	h := sha1.New()
	h.Write(seed)
	h.Write(s2[:])
	out := h.Sum(nil)
	for i := range out {
		out[i] ^= s1[i]
	}
	return out
}

// dialProto dials addr through dial and logs in within cfg.Timeout.
func dialProto(ctx context.Context, dial func(ctx context.Context, network, addr string) (net.Conn, error), cfg *mysql.Config) (*proto, error) {
	dctx, cancel := context.WithTimeout(ctx, cfg.Timeout)
	defer cancel()
	nc, err := dial(dctx, cfg.Net, cfg.Addr)
	if err != nil {
		return nil, err
	}
	p := newProto(nc)
	deadline, _ := dctx.Deadline()
	_ = nc.SetDeadline(deadline)
	stop := context.AfterFunc(ctx, func() { _ = nc.SetDeadline(time.Now()) })
	err = p.handshake(cfg)
	if !stop() && err == nil {
		// ctx ended as the handshake did: its handler has set, or is
		// setting, a deadline in the past, which on a blocking
		// connection shuts the socket down for good.
		err = fmt.Errorf("mysql: log in: %w", ctx.Err())
	}
	if err != nil {
		_ = p.fail(err)
		if cerr := ctx.Err(); cerr != nil && !errors.Is(err, errUnsupported) {
			return nil, fmt.Errorf("%w (%w)", cerr, err)
		}
		return nil, err
	}
	if err := nc.SetDeadline(time.Time{}); err != nil {
		_ = p.fail(err)
		return nil, err
	}
	return p, nil
}

// simple runs a statement without arguments and results with COM_QUERY.
func (p *proto) simple(q string, cols []column) ([]column, error) {
	p.start(comQuery)
	p.wb = append(p.wb, q...)
	if err := p.send(); err != nil {
		return cols, err
	}
	n, aff, cols, err := p.header(cols)
	if err != nil {
		return cols, err
	}
	_, cols, err = p.finish(n > 0, aff, cols)
	return cols, err
}

// value is one decoded column value.
type value struct {
	kind byte // 'i' integer, 'f' float, 'b' bytes
	i    int64
	f    float64
	b    []byte
}

// decode reads column col's binary value at row[pos:]; dates and times
// are formatted as the text protocol writes them, into scratch.
func decode(row []byte, pos int, col column, scratch []byte) (value, int, []byte, error) {
	need := func(n int) bool { return pos+n <= len(row) }
	unsigned := col.flags&flagUnsigned != 0
	switch col.typ {
	case typeTiny:
		if !need(1) {
			break
		}
		v := int64(int8(row[pos]))
		if unsigned {
			v = int64(row[pos])
		}
		return value{kind: 'i', i: v}, pos + 1, scratch, nil
	case typeShort, typeYear:
		if !need(2) {
			break
		}
		u := binary.LittleEndian.Uint16(row[pos:])
		v := int64(int16(u))
		if unsigned || col.typ == typeYear {
			v = int64(u)
		}
		return value{kind: 'i', i: v}, pos + 2, scratch, nil
	case typeLong, typeInt24:
		if !need(4) {
			break
		}
		u := binary.LittleEndian.Uint32(row[pos:])
		v := int64(int32(u))
		if unsigned {
			v = int64(u)
		}
		return value{kind: 'i', i: v}, pos + 4, scratch, nil
	case typeLongLong:
		if !need(8) {
			break
		}
		u := binary.LittleEndian.Uint64(row[pos:])
		if unsigned && u > math.MaxInt64 {
			scratch = strconv.AppendUint(scratch[:0], u, 10)
			return value{kind: 'b', b: scratch}, pos + 8, scratch, nil
		}
		return value{kind: 'i', i: int64(u)}, pos + 8, scratch, nil
	case typeFloat:
		if !need(4) {
			break
		}
		f := math.Float32frombits(binary.LittleEndian.Uint32(row[pos:]))
		// As its decimal text says, not float32's binary widened.
		var buf [32]byte
		v, _ := strconv.ParseFloat(bytesString(strconv.AppendFloat(buf[:0], float64(f), 'g', -1, 32)), 64)
		return value{kind: 'f', f: v}, pos + 4, scratch, nil
	case typeDouble:
		if !need(8) {
			break
		}
		return value{kind: 'f', f: math.Float64frombits(binary.LittleEndian.Uint64(row[pos:]))}, pos + 8, scratch, nil
	case typeDate, typeNewDate, typeDatetime, typeTimestamp, typeDatetime2, typeTimestamp2:
		if !need(1) || !need(1+int(row[pos])) {
			break
		}
		n := int(row[pos])
		scratch = appendDatetime(scratch[:0], row[pos+1:pos+1+n], col)
		return value{kind: 'b', b: scratch}, pos + 1 + n, scratch, nil
	case typeTime, typeTime2:
		if !need(1) || !need(1+int(row[pos])) {
			break
		}
		n := int(row[pos])
		scratch = appendTimeOfDay(scratch[:0], row[pos+1:pos+1+n], col)
		return value{kind: 'b', b: scratch}, pos + 1 + n, scratch, nil
	case typeNull:
		return value{}, pos, scratch, nil
	default: // decimals, strings, blobs, enums, sets, bits, JSON
		b, next, err := lenencBytes(row, pos)
		if err != nil {
			return value{}, pos, scratch, err
		}
		return value{kind: 'b', b: b}, next, scratch, nil
	}
	return value{}, pos, scratch, errMalformed
}

func appendN(b []byte, v, width int) []byte {
	s := len(b)
	b = strconv.AppendInt(b, int64(v), 10)
	for len(b)-s < width {
		b = append(b[:s+1], b[s:]...)
		b[s] = '0'
	}
	return b
}

// appendFrac writes the microseconds to the column's decimals.
func appendFrac(b []byte, micro int, dec byte) []byte {
	if dec == 0 || dec > 6 {
		return b
	}
	b = append(b, '.')
	s := len(b)
	b = appendN(b, micro, 6)
	return b[:s+int(dec)]
}

func appendDatetime(b, v []byte, col column) []byte {
	var y, mo, d, h, mi, s, us int
	if len(v) >= 4 {
		y, mo, d = int(binary.LittleEndian.Uint16(v)), int(v[2]), int(v[3])
	}
	if len(v) >= 7 {
		h, mi, s = int(v[4]), int(v[5]), int(v[6])
	}
	if len(v) >= 11 {
		us = int(binary.LittleEndian.Uint32(v[7:]))
	}
	b = appendN(b, y, 4)
	b = appendN(append(b, '-'), mo, 2)
	b = appendN(append(b, '-'), d, 2)
	if col.typ == typeDate || col.typ == typeNewDate {
		return b
	}
	b = appendN(append(b, ' '), h, 2)
	b = appendN(append(b, ':'), mi, 2)
	b = appendN(append(b, ':'), s, 2)
	return appendFrac(b, us, col.decimals)
}

func appendTimeOfDay(b, v []byte, col column) []byte {
	var neg bool
	var days, h, mi, s, us int
	if len(v) >= 8 {
		neg = v[0] == 1
		days = int(binary.LittleEndian.Uint32(v[1:]))
		h, mi, s = int(v[5]), int(v[6]), int(v[7])
	}
	if len(v) >= 12 {
		us = int(binary.LittleEndian.Uint32(v[8:]))
	}
	if neg {
		b = append(b, '-')
	}
	b = appendN(b, days*24+h, 2)
	b = appendN(append(b, ':'), mi, 2)
	b = appendN(append(b, ':'), s, 2)
	return appendFrac(b, us, col.decimals)
}

// bytesString views b as a string for parsing, without copying: the
// parsers do not keep it.
func bytesString(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}
