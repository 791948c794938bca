package testdb

import (
	"fmt"
	"testing"
)

func TestChains(t *testing.T) {
	for _, tc := range []struct {
		variants []string
		n        int
		want     string
	}{
		{nil, 3, "[[r r r]]"},
		{[]string{"a", "b", "c"}, 3, "[[r r r] [a b c]]"},
		{[]string{"a", "b", "c", "d"}, 3, "[[r r r] [a b c] [d r r]]"},
		{[]string{"a", "b"}, 1, "[[r] [a] [b]]"},
	} {
		if got := fmt.Sprint(Chains("r", tc.variants, tc.n)); got != tc.want {
			t.Errorf("Chains(r, %v, %d) = %s, want %s", tc.variants, tc.n, got, tc.want)
		}
	}
}

func TestChainName(t *testing.T) {
	c := []int{1, 22, 3}
	if got := ChainName(c, func(v int) string { return fmt.Sprint(v) }); got != "1+22+3" {
		t.Errorf("ChainName = %q, want 1+22+3", got)
	}
}
