package runner

import (
	"runtime"
	"testing"

	"github.com/sledge-bench/sledge/internal/evloop"
)

// LoopThreads: how many event loops a run gets (io=loop only), and
// whether their waits may begin raw (GOMAXPROCS raised above them).
func TestLoopThreads(t *testing.T) {
	const loopURL = "postgres://u@127.0.0.1/db?io=loop"
	noEnv := func(string) string { return "" }
	withGOMAXPROCS := func(k string) string {
		if k == "GOMAXPROCS" {
			return "2"
		}
		return ""
	}
	cases := []struct {
		name        string
		conns, jobs int
		url         string
		getenv      func(string) string
		loops       int
		raw         bool
	}{
		{"not io=loop", 4, 2, "postgres://u@127.0.0.1/db", noEnv, 0, false},
		{"io=blocking", 4, 2, "postgres://u@127.0.0.1/db?io=blocking", noEnv, 0, false},
		{"-j given", 4, 2, loopURL, noEnv, 2, true},
		{"-j above the connections", 4, 8, loopURL, noEnv, 4, true},
		{"-j not given, one connection", 1, 0, loopURL, noEnv, 1, true},
		{"GOMAXPROCS set by the user", 4, 2, loopURL, withGOMAXPROCS, 2, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := runtime.GOMAXPROCS(0)
			undo, loops, raw := LoopThreads(c.conns, c.jobs, c.url, c.getenv)
			if loops != c.loops || raw != c.raw {
				t.Errorf("loops %d, raw %v; want %d, %v", loops, raw, c.loops, c.raw)
			}
			if raw && runtime.GOMAXPROCS(0) <= loops {
				t.Errorf("GOMAXPROCS %d with %d loops waiting raw: want more", runtime.GOMAXPROCS(0), loops)
			}
			undo()
			if got := runtime.GOMAXPROCS(0); got != before {
				t.Errorf("GOMAXPROCS %d after undo, want %d", got, before)
			}
		})
	}
}

// LoopWait: the loops' wait the URL asks for (loopwait=), the default
// when it does not say.
func TestLoopWait(t *testing.T) {
	cases := []struct {
		url  string
		want evloop.WaitKind
	}{
		{"postgres://u@127.0.0.1/db?io=loop", evloop.WaitDefault},
		{"postgres://u@127.0.0.1/db?io=loop&loopwait=epoll", evloop.WaitEpoll},
		{"mysql://u@127.0.0.1/db?loopwait=io_uring&io=loop", evloop.WaitIOUring},
		{"postgres://u@127.0.0.1/db?io=loop&loopwait=kqueue", evloop.WaitDefault}, // the database refuses it
	}
	for _, c := range cases {
		if got := LoopWait(c.url); got != c.want {
			t.Errorf("%s: %v, want %v", c.url, got, c.want)
		}
	}
}

// AutoIO puts a run on event loops when the URL leaves io= open and each
// virtual user's own connections reach autoLoopPerCore per core; never
// for shared connections, a URL that says io=, or a database without it.
func TestAutoIO(t *testing.T) {
	many := autoLoopPerCore * runtime.NumCPU()
	cases := []struct {
		name   string
		url    string
		conns  int
		pooled bool
		want   string
	}{
		{"few connections", "postgres://u@127.0.0.1/db", many - 1, false, "postgres://u@127.0.0.1/db"},
		{"many connections", "postgres://u@127.0.0.1/db", many, false, "postgres://u@127.0.0.1/db?io=loop"},
		{"other options kept as written", "mysql://u@127.0.0.1/db?tls=false&isolation=repeatable%20read", many, false,
			"mysql://u@127.0.0.1/db?tls=false&isolation=repeatable%20read&io=loop"},
		{"shared connections", "postgres://u@127.0.0.1/db", many, true, "postgres://u@127.0.0.1/db"},
		{"io said", "postgres://u@127.0.0.1/db?io=blocking", many, false, "postgres://u@127.0.0.1/db?io=blocking"},
		{"embedded database", "sqlite:///tmp/x.db", many, false, "sqlite:///tmp/x.db"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, chosen := AutoIO(tc.url, tc.conns, tc.pooled)
			if got != tc.want || chosen != (got != tc.url) {
				t.Errorf("AutoIO(%q, %d, %v) = %q, %v; want %q", tc.url, tc.conns, tc.pooled, got, chosen, tc.want)
			}
		})
	}
}
