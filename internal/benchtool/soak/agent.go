package main

// The agent's memory soak (make soak-agent, issue 25 §1 "memory stays flat
// over a 1-hour soak"): sledge agent as its own process watches a private
// PostgreSQL that holds 200 connections, ~10 of which are closed and
// reopened every second (server processes come and go, as in runs with
// reconnections, which exercises the sampler's per-process and per-thread
// maps), under a light transaction load. A client reads the watch as a run
// does: Seconds once a second, a Snapshot every minute, and a new watch
// every 10 minutes. The agent's RSS and CPU are sampled from /proc.

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/sledge-bench/sledge/internal/agent"
	"github.com/sledge-bench/sledge/internal/benchtool/child"
	"github.com/sledge-bench/sledge/internal/sysprobe"
	"github.com/sledge-bench/sledge/internal/testdb"
)

const (
	agentConns       = 200 // connections held open to PostgreSQL
	agentLoaders     = 4   // of them, those running transactions
	agentChurnEvery  = 100 * time.Millisecond
	agentSnapEvery   = time.Minute
	agentRewatchEach = 10 * time.Minute
)

var agentListening = regexp.MustCompile(`listening on (\S+) \(`)

// agentSample is one reading of the agent process.
type agentSample struct {
	at      time.Duration
	rssKB   int64
	threads int64
	ticks   int64 // utime+stime so far
}

// agentCounters are what the load and the client did, for the samples.
type agentCounters struct {
	txns, churned, seconds, snapshots, watches, errs atomic.Int64
	lastErr                                          atomic.Value // string
}

func (c *agentCounters) fail(what string, err error) {
	c.errs.Add(1)
	c.lastErr.Store(what + ": " + err.Error())
}

func runAgent(ctx context.Context, o options) (bool, error) {
	dir, err := os.MkdirTemp("", "sledge-soak-agent-")
	if err != nil {
		return false, err
	}
	defer os.RemoveAll(dir)
	bin := filepath.Join(dir, "sledge")
	build := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/sledge")
	build.Dir = child.ModuleRoot()
	if out, err := build.CombinedOutput(); err != nil {
		return false, fmt.Errorf("go build: %v\n%s", err, out)
	}

	srv, err := testdb.StartPostgresWith(ctx, fmt.Sprintf("max_connections=%d", agentConns+50))
	if err != nil {
		return false, fmt.Errorf("start postgres: %w", err)
	}
	defer func() {
		if err := srv.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "soak: stop postgres:", err)
		}
	}()
	url := fmt.Sprintf("postgres://%s:%s@%s:%d/postgres", srv.User, srv.Password, srv.Host, srv.Port)

	// The agent: its own process, as on a database's host.
	cmd := exec.Command(bin, "agent", "--listen", "127.0.0.1:0")
	cmd.Env = append(os.Environ(), "XDG_DATA_HOME="+dir)
	errPipe, err := cmd.StderrPipe()
	if err != nil {
		return false, err
	}
	if err := cmd.Start(); err != nil {
		return false, fmt.Errorf("start sledge agent: %w", err)
	}
	waitDone := make(chan error, 1)
	addrCh := make(chan string, 1)
	var tailMu sync.Mutex
	var tail []string
	go func() {
		sc := bufio.NewScanner(errPipe)
		for sc.Scan() {
			line := sc.Text()
			if m := agentListening.FindStringSubmatch(line); m != nil {
				select {
				case addrCh <- m[1]:
				default:
				}
			}
			tailMu.Lock()
			tail = append(tail, line)
			if len(tail) > 20 {
				tail = tail[1:]
			}
			tailMu.Unlock()
		}
		_, _ = io.Copy(io.Discard, errPipe)
		waitDone <- cmd.Wait()
	}()
	stopAgent := func() {
		_ = cmd.Process.Signal(os.Interrupt)
		select {
		case <-waitDone:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-waitDone
		}
	}
	var addr string
	select {
	case addr = <-addrCh:
	case err := <-waitDone:
		return false, fmt.Errorf("sledge agent exited: %v\n%s", err, strings.Join(tail, "\n"))
	case <-time.After(30 * time.Second):
		stopAgent()
		return false, errors.New("sledge agent did not say where it listens within 30 s")
	case <-ctx.Done():
		stopAgent()
		return false, errors.New("interrupted")
	}
	agentDone := false
	defer func() {
		if !agentDone {
			stopAgent()
		}
	}()
	pid := cmd.Process.Pid
	fmt.Printf("soak: sledge agent (pid %d) on %s watching PostgreSQL %s on port %d; %d connections, ~%d reconnections/s, %d running transactions\n",
		pid, addr, srv.Version, srv.Port, agentConns, int(time.Second/agentChurnEvery), agentLoaders)

	// The load and the client run until the measured time is over.
	lctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var cnt agentCounters
	var wg sync.WaitGroup
	if err := agentLoad(lctx, url, &cnt, &wg); err != nil {
		cancel()
		wg.Wait()
		return false, err
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		agentClient(lctx, addr, srv.Port, &cnt)
	}()

	start := time.Now()
	var samples []agentSample
	fmt.Printf("\n| elapsed | RSS MiB | RSS KB | threads | agent CPU %% (interval) | txns | reconnections | seconds read | snapshots | watches | errors |\n|---|---|---|---|---|---|---|---|---|---|---|\n")
	record := func() {
		st, err := child.ProcStatus(pid)
		if err != nil {
			return
		}
		ticks, err := child.ProcTicks(pid)
		if err != nil {
			return
		}
		s := agentSample{at: time.Since(start), rssKB: st.RSSKB, threads: st.Threads, ticks: ticks}
		cpu := 0.0
		if n := len(samples); n > 0 {
			p := samples[n-1]
			cpu = float64(s.ticks-p.ticks) / child.ClockTicks / (s.at - p.at).Seconds() * 100
		}
		samples = append(samples, s)
		fmt.Printf("| %s | %.1f | %d | %d | %.2f | %d | %d | %d | %d | %d | %d |\n", child.Clock(s.at), float64(s.rssKB)/1024,
			s.rssKB, s.threads, cpu, cnt.txns.Load(), cnt.churned.Load(), cnt.seconds.Load(), cnt.snapshots.Load(), cnt.watches.Load(), cnt.errs.Load())
	}
	record()
	tick := time.NewTicker(o.every)
	defer tick.Stop()
	end := time.NewTimer(o.duration)
	defer end.Stop()
	interrupted := false
loop:
	for {
		select {
		case <-tick.C:
			record()
		case <-end.C:
			if time.Since(start)-samples[len(samples)-1].at >= time.Second {
				record() // the end, unless a tick just read it
			}
			break loop
		case err := <-waitDone:
			agentDone = true
			cancel()
			wg.Wait()
			tailMu.Lock()
			defer tailMu.Unlock()
			return false, fmt.Errorf("sledge agent exited during the soak: %v\n%s", err, strings.Join(tail, "\n"))
		case <-ctx.Done():
			interrupted = true
			break loop
		}
	}
	cancel()
	wg.Wait()
	agentDone = true
	stopAgent()
	if interrupted {
		return false, errors.New("interrupted")
	}
	if e, _ := cnt.lastErr.Load().(string); e != "" {
		fmt.Printf("\nerrors of the load or the client: %d; the last: %s\n", cnt.errs.Load(), e)
	}
	return agentReport(samples, o), nil
}

// agentLoad opens the connections and starts the goroutines that churn
// them and run transactions on a few; they stop with ctx.
func agentLoad(ctx context.Context, url string, cnt *agentCounters, wg *sync.WaitGroup) error {
	setup, err := pgx.Connect(ctx, url)
	if err != nil {
		return fmt.Errorf("connect to postgres: %w", err)
	}
	_, err = setup.Exec(ctx, `CREATE TABLE soak_agent (id int PRIMARY KEY, n bigint NOT NULL);
		INSERT INTO soak_agent SELECT g, 0 FROM generate_series(1, 1000) g`)
	setup.Close(context.Background())
	if err != nil {
		return fmt.Errorf("create table: %w", err)
	}

	// Idle connections, churned: the slice is the churner's alone.
	idle := make([]*pgx.Conn, agentConns-agentLoaders)
	for i := range idle {
		if idle[i], err = pgx.Connect(ctx, url); err != nil {
			for _, c := range idle[:i] {
				c.Close(context.Background())
			}
			return fmt.Errorf("connection %d: %w", i+1, err)
		}
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer func() {
			for _, c := range idle {
				if c != nil {
					c.Close(context.Background())
				}
			}
		}()
		t := time.NewTicker(agentChurnEvery)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			i := rand.IntN(len(idle))
			if idle[i] != nil {
				idle[i].Close(ctx)
				idle[i] = nil
			}
			c, err := pgx.Connect(ctx, url)
			if err != nil {
				if ctx.Err() == nil {
					cnt.fail("reconnect", err)
				}
				continue
			}
			idle[i] = c
			cnt.churned.Add(1)
		}
	}()

	// A light transaction load: a few connections, each an update and a
	// read every 20 ms or so.
	for range agentLoaders {
		c, err := pgx.Connect(ctx, url)
		if err != nil {
			return fmt.Errorf("connect a loader: %w", err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer c.Close(context.Background())
			for ctx.Err() == nil {
				id := 1 + rand.IntN(1000)
				err := pgx.BeginFunc(ctx, c, func(tx pgx.Tx) error {
					if _, err := tx.Exec(ctx, "UPDATE soak_agent SET n = n + 1 WHERE id = $1", id); err != nil {
						return err
					}
					var n int64
					return tx.QueryRow(ctx, "SELECT sum(n) FROM soak_agent WHERE id BETWEEN $1 AND $1 + 10", id).Scan(&n)
				})
				if err != nil {
					if ctx.Err() == nil {
						cnt.fail("transaction", err)
					}
					continue
				}
				cnt.txns.Add(1)
				select {
				case <-ctx.Done():
				case <-time.After(time.Duration(10+rand.IntN(20)) * time.Millisecond):
				}
			}
		}()
	}
	return nil
}

// agentClient reads the agent as a run does, with a new watch every
// agentRewatchEach as successive runs would have.
func agentClient(ctx context.Context, addr string, port int, cnt *agentCounters) {
	cl, err := agent.Dial(ctx, addr, agent.ClientOptions{Timeout: 10 * time.Second})
	if err != nil {
		cnt.fail("dial", err)
		return
	}
	defer cl.Close()
	for ctx.Err() == nil {
		w, err := cl.Watch(ctx, sysprobe.Target{Port: port}, false)
		if err != nil {
			if ctx.Err() == nil {
				cnt.fail("watch", err)
				time.Sleep(time.Second)
			}
			continue
		}
		cnt.watches.Add(1)
		agentWatch(ctx, w, cnt)
		_ = w.Close()
	}
}

// agentWatch reads one watch for agentRewatchEach.
func agentWatch(ctx context.Context, w sysprobe.Source, cnt *agentCounters) {
	if _, err := w.Snapshot(ctx); err != nil && ctx.Err() == nil {
		cnt.fail("snapshot", err)
	}
	cnt.snapshots.Add(1)
	sec := time.NewTicker(time.Second)
	defer sec.Stop()
	snap := time.NewTicker(agentSnapEvery)
	defer snap.Stop()
	done := time.NewTimer(agentRewatchEach)
	defer done.Stop()
	var after int64
	for {
		select {
		case <-ctx.Done():
			return
		case <-done.C:
			return
		case <-sec.C:
			s, err := w.Seconds(ctx, after)
			if err != nil {
				if ctx.Err() == nil {
					cnt.fail("seconds", err)
				}
				continue
			}
			if len(s) > 0 {
				after = s[len(s)-1].Seq
			}
			cnt.seconds.Add(int64(len(s)))
		case <-snap.C:
			if _, err := w.Snapshot(ctx); err != nil {
				if ctx.Err() == nil {
					cnt.fail("snapshot", err)
				}
				continue
			}
			cnt.snapshots.Add(1)
		}
	}
}

// agentReport prints the growth after warm-up and the agent's mean CPU,
// and says whether the growth is within bounds.
func agentReport(samples []agentSample, o options) bool {
	pts := make([]sample, len(samples))
	for i, s := range samples {
		pts[i] = sample{at: s.at, rssKB: s.rssKB}
	}
	after, growth, ok := rssGrowth(pts, o.warmup)
	if !ok {
		return false
	}
	first, last := samples[0], samples[len(samples)-1]
	base, end := samples[len(samples)-len(after)], last
	cpu := func(a, b agentSample) float64 {
		return float64(b.ticks-a.ticks) / child.ClockTicks / (b.at - a.at).Seconds() * 100
	}
	fmt.Printf("agent CPU: %.2f%% of one core on average over the whole soak (%.1f s in %s), %.2f%% after warm-up\n",
		cpu(first, last), float64(last.ticks-first.ticks)/child.ClockTicks, child.Clock(last.at-first.at), cpu(base, end))
	if growth > o.maxGrowth {
		fmt.Printf("FAIL: the agent's RSS grew %.1f%% after warm-up, more than %.0f%%\n", growth, o.maxGrowth)
		return false
	}
	fmt.Printf("PASS: the agent's RSS grew %.1f%% after warm-up (limit %.0f%%)\n", growth, o.maxGrowth)
	return true
}
