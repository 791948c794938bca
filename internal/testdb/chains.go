package testdb

import "strings"

// Chains groups variants of a run for tests that compare what each leaves
// in a database: instead of a copy of the build per variant, a copy per
// chain of n, whose k-th run takes the k-th seed. The first chain is the
// reference, ref n times; every other chain must leave what it leaves. The
// last chain is filled up with ref. Copying and hashing a database costs
// several runs of one VU, so a chain pays them once for n variants, and a
// variant that does something else still makes its chain differ.
func Chains[V any](ref V, variants []V, n int) [][]V {
	chain := make([]V, n)
	for i := range chain {
		chain[i] = ref
	}
	out := [][]V{chain}
	for i := 0; i < len(variants); i += n {
		c := append([]V(nil), variants[i:min(i+n, len(variants))]...)
		for len(c) < n {
			c = append(c, ref)
		}
		out = append(out, c)
	}
	return out
}

// ChainName names chain c by its variants' names, joined with "+".
func ChainName[V any](c []V, name func(V) string) string {
	names := make([]string, len(c))
	for i, v := range c {
		names[i] = name(v)
	}
	return strings.Join(names, "+")
}
