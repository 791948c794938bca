package db

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
)

// Statements of variable arity (--mode batched): a named statement's text
// may hold repeated groups, written once in the file and sent repeated k
// times, k taken from the number of arguments of the call:
//
//	SELECT i_id, i_price FROM item WHERE i_id IN ({{$1}})
//	  → … IN ($1, $2, $3) for 3 arguments
//	UPDATE t JOIN ({{/ UNION ALL /SELECT ? AS a, ? AS b}}) v …
//	  → SELECT ? AS a, ? AS b UNION ALL SELECT ? AS a, ? AS b for 4
//
// {{body}} joins the copies with ", "; {{/sep/body}} with sep. Every group
// of a statement is repeated the same k times (k ≥ 1). The file writes the
// placeholders as for k = 1, each once, in order of appearance (the
// contract of every statement); expanding renumbers them in order
// (PostgreSQL $n, SQLite ?n), so the arguments are: those before the first
// group, k copies of the first group's, and so on. Each k is a statement of
// its own, with its own name ("neword.items#7") under which a session
// prepares it. The expansions are built once per database, and those for k
// up to preExpanded when the text is read, so a call looks its text up
// without building strings.

// preExpanded is how many expansions are built up front: TPC-C needs at
// most 15 (order lines); more are built on first use and kept.
const preExpanded = 16

// Expansion is one repeat count's statement.
type Expansion struct {
	Name string // "<name>#<k>", under which a session prepares it
	Text string // native SQL
}

// Repeated is a named statement with repeated groups. Safe for concurrent
// use.
type Repeated struct {
	name  string
	style Placeholder
	segs  []segment
	fixed int // placeholders outside the groups
	per   int // placeholders in one copy of every group
	pre   []Expansion

	mu   sync.Mutex
	more map[int]Expansion
}

// segment is literal text, a placeholder, or a group of segments.
type segment struct {
	kind  segKind
	text  string    // literal text; a group's separator
	group []segment // kind == segGroup
}

type segKind uint8

const (
	segText segKind = iota
	segParam
	segGroup
)

// ParseRepeated reads a statement text in style; r is nil when the text has
// no group. Errors say what is wrong with the text.
func ParseRepeated(name, text string, style Placeholder) (r *Repeated, err error) {
	if style != QuestionNumbered && style != Dollar && style != Question {
		return nil, fmt.Errorf("statement %s: unknown placeholder style %d", name, int(style))
	}
	p := repeatParser{src: text, style: style}
	segs, err := p.parse(false)
	if err != nil {
		return nil, fmt.Errorf("statement %s: %w", name, err)
	}
	if !p.groups {
		return nil, nil // other statements may number their placeholders freely
	}
	if p.orderErr != nil {
		return nil, fmt.Errorf("statement %s: %w", name, p.orderErr)
	}
	r = &Repeated{name: name, style: style, segs: segs}
	for _, s := range segs {
		switch s.kind {
		case segParam:
			r.fixed++
		case segGroup:
			for _, g := range s.group {
				if g.kind == segParam {
					r.per++
				}
			}
		}
	}
	if r.per == 0 {
		return nil, fmt.Errorf("statement %s: its groups hold no placeholder, so no number of arguments can tell how often to repeat them", name)
	}
	r.pre = make([]Expansion, preExpanded)
	for k := 1; k <= preExpanded; k++ {
		r.pre[k-1] = r.expand(k)
	}
	return r, nil
}

// Fixed and PerRepeat are the statement's arguments outside the groups and
// in one copy of them.
func (r *Repeated) Fixed() int     { return r.fixed }
func (r *Repeated) PerRepeat() int { return r.per }

// For returns the expansion that takes nargs arguments.
func (r *Repeated) For(nargs int) (Expansion, error) {
	k := 0
	if n := nargs - r.fixed; n > 0 && n%r.per == 0 {
		k = n / r.per
	}
	if k < 1 {
		return Expansion{}, fmt.Errorf("statement %s takes %d arguments and %d for each repeat (at least one), got %d", r.name, r.fixed, r.per, nargs)
	}
	if k <= len(r.pre) {
		return r.pre[k-1], nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	e, ok := r.more[k]
	if !ok {
		e = r.expand(k)
		if r.more == nil {
			r.more = map[int]Expansion{}
		}
		r.more[k] = e
	}
	return e, nil
}

// expand writes the text for k repeats, numbering placeholders in order.
func (r *Repeated) expand(k int) Expansion {
	var b strings.Builder
	n := 0
	param := func() {
		n++
		switch r.style {
		case Dollar:
			b.WriteByte('$')
			b.WriteString(strconv.Itoa(n))
		case QuestionNumbered:
			b.WriteByte('?')
			b.WriteString(strconv.Itoa(n))
		default:
			b.WriteByte('?')
		}
	}
	for _, s := range r.segs {
		switch s.kind {
		case segText:
			b.WriteString(s.text)
		case segParam:
			param()
		case segGroup:
			for i := range k {
				if i > 0 {
					b.WriteString(s.text)
				}
				for _, g := range s.group {
					if g.kind == segParam {
						param()
					} else {
						b.WriteString(g.text)
					}
				}
			}
		}
	}
	return Expansion{Name: r.name + "#" + strconv.Itoa(k), Text: b.String()}
}

// repeatParser splits a statement into segments. Quotes, comments and
// PostgreSQL dollar quotes are copied as text: a {{ or a ? inside them is
// not one.
type repeatParser struct {
	src      string
	i        int
	style    Placeholder
	next     int   // number the next placeholder must have
	orderErr error // the first placeholder out of order
	groups   bool  // a group was seen
}

func (p *repeatParser) parse(inGroup bool) ([]segment, error) {
	var out []segment
	start := p.i
	text := func(end int) {
		if end > start {
			out = append(out, segment{kind: segText, text: p.src[start:end]})
		}
	}
	for p.i < len(p.src) {
		c := p.src[p.i]
		switch {
		case c == '\'' || c == '"' || c == '`':
			j := skipQuoted(p.src, p.i+1, c, p.style == Question && c != '`')
			if j < 0 {
				return nil, fmt.Errorf("unterminated %c quote", c)
			}
			p.i = j
		case c == '-' && strings.HasPrefix(p.src[p.i:], "--"):
			j := strings.IndexByte(p.src[p.i:], '\n')
			if j < 0 {
				p.i = len(p.src)
			} else {
				p.i += j + 1
			}
		case c == '/' && strings.HasPrefix(p.src[p.i:], "/*"):
			j := strings.Index(p.src[p.i+2:], "*/")
			if j < 0 {
				return nil, errors.New("unterminated /* comment")
			}
			p.i += 2 + j + 2
		case c == '{' && strings.HasPrefix(p.src[p.i:], "{{"):
			if inGroup {
				return nil, errors.New("a group inside a group")
			}
			text(p.i)
			p.i += 2
			sep := ", "
			if strings.HasPrefix(p.src[p.i:], "/") {
				j := strings.IndexByte(p.src[p.i+1:], '/')
				if j < 0 {
					return nil, errors.New("unterminated {{/separator/")
				}
				sep = p.src[p.i+1 : p.i+1+j]
				p.i += j + 2
			}
			body, err := p.parse(true)
			if err != nil {
				return nil, err
			}
			out = append(out, segment{kind: segGroup, text: sep, group: body})
			p.groups = true
			start = p.i
		case c == '}' && strings.HasPrefix(p.src[p.i:], "}}"):
			if !inGroup {
				return nil, errors.New("}} without {{")
			}
			text(p.i)
			p.i += 2
			return out, nil
		case c == '?' && p.style != Dollar:
			j := p.i + 1
			if p.style == QuestionNumbered {
				for j < len(p.src) && p.src[j] >= '0' && p.src[j] <= '9' {
					j++
				}
			}
			p.param(p.src[p.i+1 : j])
			text(p.i)
			out = append(out, segment{kind: segParam})
			p.i, start = j, j
		case c == '$' && p.style == Dollar && (p.i == 0 || !identByte(p.src[p.i-1])):
			j := p.i + 1
			for j < len(p.src) && p.src[j] >= '0' && p.src[j] <= '9' {
				j++
			}
			if j > p.i+1 {
				p.param(p.src[p.i+1 : j])
				text(p.i)
				out = append(out, segment{kind: segParam})
				p.i, start = j, j
				continue
			}
			if tag, ok := dollarTag(p.src, p.i); ok {
				k := strings.Index(p.src[p.i+len(tag):], tag)
				if k < 0 {
					return nil, fmt.Errorf("unterminated %s quote", tag)
				}
				p.i += len(tag) + k + len(tag)
				continue
			}
			p.i++
		default:
			p.i++
		}
	}
	if inGroup {
		return nil, errors.New("{{ without }}")
	}
	text(p.i)
	return out, nil
}

// param checks a placeholder's number (digits; "" for a bare ?): a text
// with groups numbers them 1, 2, … in order of appearance, as for one
// repeat.
func (p *repeatParser) param(digits string) {
	p.next++
	if digits == "" || p.orderErr != nil {
		return
	}
	if n, err := strconv.Atoi(digits); err != nil || n != p.next {
		p.orderErr = fmt.Errorf("placeholder %s where %d was due: write the placeholders as for one repeat, numbered in order of appearance", digits, p.next)
	}
}

// FindRepeated returns the statements of text that hold repeated groups,
// or nil when none does.
func FindRepeated(text map[string]string, style Placeholder) (map[string]*Repeated, error) {
	var out map[string]*Repeated
	for name, q := range text {
		r, err := ParseRepeated(name, q, style)
		if err != nil {
			return nil, err
		}
		if r == nil {
			continue
		}
		if out == nil {
			out = map[string]*Repeated{}
		}
		out[name] = r
	}
	return out, nil
}

// RepeatedCache keeps each workload's repeated statements, parsed and
// expanded once per database. The zero value is ready to use.
type RepeatedCache struct {
	mu sync.Mutex
	m  map[string]map[string]*Repeated
}

// Get returns FindRepeated(text, style) for workload w, computed once;
// dbName is for messages ("postgres").
func (c *RepeatedCache) Get(dbName, w string, text map[string]string, style Placeholder) (map[string]*Repeated, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if r, ok := c.m[w]; ok {
		return r, nil
	}
	r, err := FindRepeated(text, style)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", dbName, err)
	}
	if c.m == nil {
		c.m = map[string]map[string]*Repeated{}
	}
	c.m[w] = r
	return r, nil
}
