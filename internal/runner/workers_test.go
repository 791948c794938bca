package runner

import "testing"

func TestWithPort(t *testing.T) {
	cases := []struct{ in, want string }{
		{":7077", ":7077"},
		{"sledge-coordinator:9000", "sledge-coordinator:9000"},
		{"sledge-coordinator", "sledge-coordinator:7077"},
		{"10.0.0.1", "10.0.0.1:7077"},
		{"[::1]", "[::1]:7077"},
		{"[::1]:8000", "[::1]:8000"},
		{"", ":7077"},
		{"::1", ""}, // ambiguous: brackets needed
		{"a:b:c", ""},
	}
	for _, tc := range cases {
		got, err := withPort(tc.in)
		if tc.want == "" {
			if err == nil {
				t.Errorf("%q: got %q, want an error", tc.in, got)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%q: got %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
}
