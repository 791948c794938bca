package sysprobe

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/sledge-bench/sledge/internal/testdb"
)

// The tests watch real processes: this test binary run again as a child
// (SYSPROBE_CHILD names what it does), printing one line "ready …" when
// it is set up and running until its stdin closes.

var (
	// Servers of the package's own: TestPostgres needs the postmaster's
	// pid, which a server shared by the whole test run (testdb.LazyPostgres
	// under make test) does not give, and TestMariaDB a server no other
	// test has clients on.
	pg = testdb.NewLazy(testdb.StartPostgres)
	my = testdb.NewLazy(testdb.StartMariaDB)
)

func TestMain(m *testing.M) {
	if mode := os.Getenv("SYSPROBE_CHILD"); mode != "" {
		runChild(mode, os.Args[len(os.Args)-1])
		os.Exit(0)
	}
	testdb.Main(m, pg, my)
}

// child is a running child process.
type child struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	ready []string // the words after "ready"
}

// startChild runs this binary as a child in mode with arg.
func startChild(t testing.TB, mode, arg string) *child {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$", arg)
	cmd.Env = append(os.Environ(), "SYSPROBE_CHILD="+mode)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c := &child{cmd: cmd, stdin: stdin}
	t.Cleanup(func() { c.stop() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "ready") {
		t.Fatalf("child %s: %q %v", mode, line, err)
	}
	c.ready = strings.Fields(line)[1:]
	go io.Copy(io.Discard, out)
	return c
}

func (c *child) pid() int { return c.cmd.Process.Pid }

func (c *child) stop() {
	if c.stdin != nil {
		c.stdin.Close()
		c.stdin = nil
		done := make(chan struct{})
		go func() { c.cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			c.cmd.Process.Kill()
			<-done
		}
	}
}

// lockedThread runs f on a goroutine locked to its own OS thread and
// returns the thread's id; the thread never returns to the scheduler.
func lockedThread(f func()) int {
	ch := make(chan int)
	go func() {
		runtime.LockOSThread()
		ch <- syscall.Gettid()
		f()
	}()
	return <-ch
}

func runChild(mode, arg string) {
	ready := func(words ...string) { fmt.Println(strings.TrimSpace("ready " + strings.Join(words, " "))) }
	switch mode {
	case "echo": // listen on a loopback port, echo every connection
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			panic(err)
		}
		go func() {
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				go func() { io.Copy(c, c); c.Close() }()
			}
		}()
		ready(strconv.Itoa(ln.Addr().(*net.TCPAddr).Port))
	case "threads": // arg threads blocked in a read on a pipe
		n, _ := strconv.Atoi(arg)
		var fds [2]int
		if err := syscall.Pipe(fds[:]); err != nil {
			panic(err)
		}
		for i := 0; i < n; i++ {
			lockedThread(func() {
				var b [1]byte
				syscall.Read(fds[0], b[:])
				select {}
			})
		}
		ready()
	case "states": // one thread in each known state
		spin := lockedThread(func() {
			for {
			}
		})
		sp, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
		if err != nil {
			panic(err)
		}
		netw := lockedThread(func() {
			var b [1]byte
			syscall.Read(sp[0], b[:])
			select {}
		})
		var mu sync.Mutex
		mu.Lock()
		lock := lockedThread(func() { mu.Lock() })
		sleep := lockedThread(func() {
			for {
				ts := syscall.Timespec{Sec: 10}
				syscall.Nanosleep(&ts, nil)
			}
		})
		ready(strconv.Itoa(spin), strconv.Itoa(netw), strconv.Itoa(lock), strconv.Itoa(sleep))
	case "forker": // children that burn CPU for 300 ms and exit, one after another
		ready()
		go func() {
			for {
				cmd := exec.Command(os.Args[0], "-test.run=^$", "300")
				cmd.Env = append(os.Environ(), "SYSPROBE_CHILD=burn")
				cmd.Run()
			}
		}()
	case "burn": // burn CPU for arg ms, then exit
		ms, _ := strconv.Atoi(arg)
		end := time.Now().Add(time.Duration(ms) * time.Millisecond)
		for time.Now().Before(end) {
		}
		return
	case "churn": // threads that start, work a little and end, forever
		ready()
		go func() {
			for {
				var wg sync.WaitGroup
				for i := 0; i < 20; i++ {
					wg.Add(1)
					go func() {
						defer wg.Done()
						runtime.LockOSThread() // not unlocked: the thread ends with the goroutine
						end := time.Now().Add(time.Millisecond)
						for time.Now().Before(end) {
						}
					}()
				}
				wg.Wait()
				time.Sleep(20 * time.Millisecond)
			}
		}()
	case "spin": // busy on arg threads
		n, _ := strconv.Atoi(arg)
		// Enough Ps for every spinner: otherwise Go parks the locked
		// threads it has no P for in a futex, and they wait on Go's
		// scheduler rather than the kernel's.
		runtime.GOMAXPROCS(n + 1)
		for i := 0; i < n; i++ {
			lockedThread(func() {
				x := 0
				for {
					x = spinWork(x)
				}
			})
		}
		ready()
	default:
		panic("unknown child mode " + mode)
	}
	io.Copy(io.Discard, os.Stdin) // run until the parent closes stdin
}

//go:noinline
func spinWork(x int) int {
	for i := 0; i < 1000; i++ {
		x = x*31 + i
	}
	return x
}
