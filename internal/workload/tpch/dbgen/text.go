package dbgen

import (
	"sync"
	"unsafe"
)

// PoolSize is the size of dbgen's text pool: 300 MiB.
const PoolSize = 300 << 20

var (
	poolOnce sync.Once
	pool     string
)

// textPool returns the shared, read-only text pool, building it on first use
// (about 2 s on a loaded 2-core machine; 300 MiB held for the life of the
// process, since every comment of every table is a slice of it).
func textPool() string {
	poolOnce.Do(func() { pool = buildPool(PoolSize) })
	return pool
}

// grammar holds the distributions the sentence grammar draws from.
type grammar struct {
	grammar, np, vp                       *dist
	nouns, verbs, adjs, advs, preps, auxs *dist
	terms                                 *dist
}

func newGrammar() *grammar {
	return &grammar{
		grammar: getDist("grammar"), np: getDist("np"), vp: getDist("vp"),
		nouns: getDist("nouns"), verbs: getDist("verbs"), adjs: getDist("adjectives"),
		advs: getDist("adverbs"), preps: getDist("prepositions"), auxs: getDist("auxillaries"),
		terms: getDist("terminators"),
	}
}

// word appends a space (unless at the start) and a word picked from d.
func word(b []byte, d *dist, s *stream) []byte {
	if len(b) > 0 {
		b = append(b, ' ')
	}
	return append(b, d.names[d.pick(s)]...)
}

// nounPhrase expands one form of np: N, J N, "J, J N", D J N.
func (g *grammar) nounPhrase(b []byte, s *stream) []byte {
	for _, c := range []byte(g.np.names[g.np.pick(s)]) {
		switch c {
		case 'N':
			b = word(b, g.nouns, s)
		case 'J':
			b = word(b, g.adjs, s)
		case 'D':
			b = word(b, g.advs, s)
		case ',':
			b = append(b, ',')
		}
	}
	return b
}

// verbPhrase expands one form of vp: V, X V, V D, X V D.
func (g *grammar) verbPhrase(b []byte, s *stream) []byte {
	for _, c := range []byte(g.vp.names[g.vp.pick(s)]) {
		switch c {
		case 'V':
			b = word(b, g.verbs, s)
		case 'X':
			b = word(b, g.auxs, s)
		case 'D':
			b = word(b, g.advs, s)
		}
	}
	return b
}

// sentence appends one sentence (no trailing space) to b[:0].
func (g *grammar) sentence(b []byte, s *stream) []byte {
	b = b[:0]
	for _, c := range []byte(g.grammar.names[g.grammar.pick(s)]) {
		switch c {
		case 'N':
			b = g.nounPhrase(b, s)
		case 'V':
			b = g.verbPhrase(b, s)
		case 'P':
			b = word(b, g.preps, s)
			b = append(b, " the"...)
			b = g.nounPhrase(b, s)
		case 'T':
			b = append(b, g.terms.names[g.terms.pick(s)]...)
		}
	}
	return b
}

func buildPool(size int) string {
	g := newGrammar()
	s := stream{seed: seedTable[sdText].seed}
	buf := make([]byte, 0, size)
	var sent []byte
	for len(buf) < size {
		sent = g.sentence(sent, &s)
		need := size - len(buf)
		if need >= len(sent)+1 {
			buf = append(buf, sent...)
			buf = append(buf, ' ')
		} else {
			buf = append(buf, sent[:need]...)
		}
	}
	// buf is never written again: share it as a string without a second
	// 300 MiB copy.
	return unsafe.String(unsafe.SliceData(buf), len(buf))
}

// text draws a comment of average length avg on s: offset, then length (two
// draws), a slice of the pool.
func text(s *stream, avg int64) string {
	p := textPool()
	hi := avg * 16 / 10
	off := s.unif(0, int64(len(p))-hi)
	n := s.unif(avg*4/10, hi)
	return p[off : off+n]
}
