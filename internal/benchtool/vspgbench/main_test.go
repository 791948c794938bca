package main

import (
	"reflect"
	"testing"
)

func TestParseLoads(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []int
		ok   bool
	}{
		{"0", []int{0}, true},
		{"0,1", []int{0, 1}, true},
		{" 2 ,0", []int{2, 0}, true},
		{"x", nil, false},
		{"-1", nil, false},
		{"1,", nil, false},
	} {
		got, err := parseLoads(c.in)
		if (err == nil) != c.ok || (c.ok && !reflect.DeepEqual(got, c.want)) {
			t.Errorf("parseLoads(%q) = %v, %v; want %v (ok %v)", c.in, got, err, c.want, c.ok)
		}
	}
}
