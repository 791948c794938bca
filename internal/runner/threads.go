package runner

import (
	"net/url"
	"runtime"
	"sync"

	"github.com/sledge-bench/sledge/internal/db"
	"github.com/sledge-bench/sledge/internal/evloop"
)

// maxRawConns is the most connections for which a run gives each its own
// processor and lets them wait in raw system calls (db.SetRawIO). Beyond
// it, the processors would outnumber the cores by too much: the garbage
// collector sizes its work by GOMAXPROCS.
const maxRawConns = 64

var threads struct {
	sync.Mutex
	users int
}

// ClientThreads prepares the process for conns virtual-user connections
// that each wait for the server on their own thread: GOMAXPROCS is raised
// above conns, so that a thread waiting in a raw system call never holds
// a processor another one needs, and raw waits are turned on. Measured in
// docs/benchmarks.md ("How a virtual user waits"): the Go scheduler's
// hand-offs and its monitor thread's wake-ups around each blocking read
// cost more client CPU than the read itself. A GOMAXPROCS set by the user
// is left alone, and so is a run with more connections than maxRawConns.
// raw reports whether it did; the virtual users should then keep their
// threads (engine.Plan.PinThreads). The returned function undoes it.
func ClientThreads(conns int, dbURL string, getenv func(string) string) (undo func(), raw bool) {
	if conns > maxRawConns || getenv("GOMAXPROCS") != "" || otherIO(dbURL) {
		return func() {}, false
	}
	threads.Lock()
	defer threads.Unlock()
	threads.users++
	// Room for the engine, the progress display and control sessions.
	if want := conns + 4; want > runtime.GOMAXPROCS(0) {
		runtime.GOMAXPROCS(want)
	}
	db.SetRawIO(true)
	return func() {
		threads.Lock()
		defer threads.Unlock()
		if threads.users--; threads.users == 0 {
			db.SetRawIO(false)
			runtime.SetDefaultGOMAXPROCS()
		}
	}, true
}

// otherIO reports whether the URL asks for another way of waiting than the
// default (io=syscall, io=poller): then the run leaves threads alone. The
// option is read as the database packages read it (db.IOOption).
func otherIO(dbURL string) bool {
	u, err := url.Parse(dbURL)
	if err != nil {
		return false
	}
	m, err := db.IOOption(u.Query(), "")
	return err == nil && m != db.IOBlocking
}

// LoopThreads prepares the process for a run whose connections wait on
// event loops (io=loop, engine.Plan.Loops): loops is jobs when the user
// gave it (pgbench's -j), else GOMAXPROCS, never more than conns (pgbench
// runs no more threads than clients); 0 when the URL asks for another way
// of waiting. As ClientThreads, it raises GOMAXPROCS above the loops
// unless the user set it, so that a loop's thread waiting raw never holds
// a processor the rest of the program needs; raw reports whether it did
// (the loops' waits then begin raw: engine.Plan.PinThreads). The returned
// function undoes it.
func LoopThreads(conns, jobs int, dbURL string, getenv func(string) string) (undo func(), loops int, raw bool) {
	if !loopIO(dbURL) {
		return func() {}, 0, false
	}
	loops = jobs
	if loops <= 0 {
		loops = runtime.GOMAXPROCS(0)
	}
	loops = max(min(loops, conns), 1)
	if loops > maxRawConns || getenv("GOMAXPROCS") != "" {
		return func() {}, loops, false
	}
	undo, raw = ClientThreads(loops, "", getenv)
	return undo, loops, raw
}

// LoopWait is how the URL's io=loop asks its event loops to wait (the
// loopwait option): evloop.WaitDefault when it does not say.
func LoopWait(dbURL string) evloop.WaitKind {
	u, err := url.Parse(dbURL)
	if err != nil {
		return evloop.WaitDefault
	}
	k, err := db.LoopWaitOption(u.Query(), "")
	if err != nil {
		return evloop.WaitDefault // the database refuses the URL with the reason
	}
	return k
}

// autoLoopPerCore is the number of connections per core from which a run
// whose URL leaves io= open waits on event loops (io=loop) instead of a
// thread per connection, when each virtual user has its own connection.
// Measured (docs/benchmarks.md, "Issue 26: io_uring as the loop's wait",
// and "Issue 26: the default way of waiting"): with two connections per
// loop the loop cost 0.97-1.20x the threads' CPU per transaction; with
// 16 and 32 per loop 0.58-0.85x, with a quarter to a half of the context
// switches (one wait finds several sockets ready, as pgbench's threads
// do). Virtual users sharing connections (--connections) keep threads:
// thousands of terminals as coroutines of a few loops were not measured.
const autoLoopPerCore = 16

// AutoIO returns dbURL with io=loop added when the run should wait on
// event loops although the URL does not say (autoLoopPerCore): conns
// connections, one per virtual user unless pooled, on a database whose
// sessions take io= and a URL without io=. chosen reports whether it
// added it.
func AutoIO(dbURL string, conns int, pooled bool) (out string, chosen bool) {
	if pooled || conns < autoLoopPerCore*runtime.NumCPU() {
		return dbURL, false
	}
	u, err := url.Parse(dbURL)
	if err != nil || !db.TakesIO(u.Scheme) {
		return dbURL, false
	}
	if _, ok := u.Query()["io"]; ok {
		return dbURL, false
	}
	// Appended, not re-encoded: the other options stay as written.
	if u.RawQuery != "" {
		u.RawQuery += "&"
	}
	u.RawQuery += "io=loop"
	return u.String(), true
}

// loopIO reports whether the URL asks for io=loop.
func loopIO(dbURL string) bool {
	u, err := url.Parse(dbURL)
	if err != nil {
		return false
	}
	m, err := db.IOOption(u.Query(), "")
	return err == nil && m == db.IOLoop
}
