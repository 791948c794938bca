// Command manyvus measures sledge with many virtual users over few
// connections (make bench-vus, issue 12): it builds sledge, starts a private
// PostgreSQL (internal/testdb) with max_connections raised for the run's
// connections, builds TPC-C with -warehouses, then runs
//
//	sledge run tpcc --vus 10000 --connections 200 --keying-thinking --rampup R --duration D -P 5 --json
//
// (procedure mode, PostgreSQL's default) while reading the sledge process's
// VmRSS, threads and CPU from /proc every -every. It reports the peak RSS
// (the kernel's VmHWM and the sampled peak), sledge's CPU over the measured
// interval as a percentage of one core (from the run's own JSON cost
// figures: client_cpu_us × transactions ÷ measured seconds) and over the
// whole run (the child's rusage), and NOPM against the ceiling keying and
// thinking times allow (≈1.286 new orders per minute per terminal). With
// -baseline-vus it first runs a smaller run over the same connections, so
// the difference in peak RSS gives the memory of one more terminal.
//
// Keying and thinking cycles are 7–30 s (21 s on average), so the ramp-up
// must be at least a minute for every terminal to be in its cycle, and the
// measured interval a few minutes for NOPM to settle. Not part of make
// test; make bench-vus runs it under nice, and the server inherits that.
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"github.com/sledge-bench/sledge/internal/benchtool/child"
	"io"
	"math"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/sledge-bench/sledge/internal/testdb"
	"github.com/sledge-bench/sledge/internal/workload/tpcc"
)

type options struct {
	vus         int
	connections int
	warehouses  int
	rampup      time.Duration
	duration    time.Duration
	every       time.Duration
	mode        string
	baseline    int
	baseRampup  time.Duration
	baseDur     time.Duration
	buildVUs    int
	maxRSSMiB   float64
	maxCPUPct   float64
	io          string
	hold        time.Duration
}

func main() {
	var o options
	flag.IntVar(&o.vus, "vus", 10000, "virtual users (terminals)")
	flag.IntVar(&o.connections, "connections", 200, "connections serving them (sledge run --connections)")
	flag.IntVar(&o.warehouses, "warehouses", 100, "TPC-C warehouses to build")
	flag.DurationVar(&o.rampup, "rampup", 2*time.Minute, "ramp-up: at least a minute, so every terminal is in its keying/thinking cycle")
	flag.DurationVar(&o.duration, "duration", 5*time.Minute, "measured interval")
	flag.DurationVar(&o.every, "every", 5*time.Second, "sampling interval of RSS and CPU")
	flag.StringVar(&o.mode, "mode", "", "sledge run --mode (default: PostgreSQL's, procedure)")
	flag.IntVar(&o.baseline, "baseline-vus", 1000, "first run this many VUs over the same connections, for the memory per terminal; 0: skip")
	flag.DurationVar(&o.baseRampup, "baseline-rampup", time.Minute, "ramp-up of the baseline run")
	flag.DurationVar(&o.baseDur, "baseline-duration", time.Minute, "measured interval of the baseline run")
	flag.StringVar(&o.io, "io", "", "the URL's io option: blocking or poller (default: the driver's, blocking)")
	flag.DurationVar(&o.hold, "hold", 0, "after the build, print the URL and keep the server up this long instead of measuring (for runs and profiles by hand)")
	flag.IntVar(&o.buildVUs, "build-vus", 0, "sledge build --build-vus (default: sledge's, the CPUs)")
	flag.Float64Var(&o.maxRSSMiB, "goal-rss", 1024, "goal: peak RSS below this many MiB")
	flag.Float64Var(&o.maxCPUPct, "goal-cpu", 5, "goal: sledge's CPU below this percentage of one core over the measured interval")
	flag.Parse()
	switch {
	case o.vus < 1 || o.connections < 1 || o.connections > o.vus:
		fail(2, "-connections must be from 1 to -vus")
	case o.warehouses < 1:
		fail(2, "-warehouses must be at least 1")
	case o.baseline < 0 || o.baseline >= o.vus:
		fail(2, "-baseline-vus must be below -vus (0: no baseline)")
	case o.baseline > 0 && o.baseline < o.connections:
		fail(2, "-baseline-vus must be at least -connections")
	}
	if o.rampup < time.Minute {
		fmt.Fprintln(os.Stderr, "manyvus: note: a ramp-up under a minute leaves terminals in their first keying time when the measured interval starts")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, o); err != nil {
		fail(1, err.Error())
	}
}

func fail(code int, msg string) {
	fmt.Fprintln(os.Stderr, "manyvus:", msg)
	os.Exit(code)
}

// ceilingPerTerminal is the most new orders per minute one terminal can
// enter with TPC-C's keying and think times and no response time: the
// New-Order share of the mix over the mean cycle (keying plus think time,
// the think time's negative exponential truncated at ten times its mean).
func ceilingPerTerminal() float64 {
	mix := tpcc.New(tpcc.Config{}).Mix()
	var weights, cycle, newOrders float64
	for i, t := range mix {
		w := float64(t.Weight)
		weights += w
		think := t.Think.Seconds() * (1 - math.Exp(-10))
		cycle += w * (t.Keying.Seconds() + think)
		if i == 0 { // the mix's first type is New-Order
			newOrders = w
		}
	}
	return newOrders / weights * 60 / (cycle / weights)
}

// result is the part of sledge run --json this tool reads.
type result struct {
	VUs         int      `json:"vus"`
	Connections int      `json:"connections"`
	Mode        string   `json:"mode"`
	MeasuredS   float64  `json:"measured_s"`
	NOPM        *float64 `json:"nopm"`
	TPM         float64  `json:"tpm"`
	TPMSource   string   `json:"tpm_source"`
	TPMClient   float64  `json:"tpm_client"`
	TPMNote     string   `json:"tpm_note"`
	TPS         float64  `json:"tps"`
	ConnWait    *struct {
		Count  int64   `json:"count"`
		MeanMs float64 `json:"mean_ms"`
		MaxMs  float64 `json:"max_ms"`
	} `json:"connection_wait"`
	Total struct {
		Count   int64   `json:"count"`
		Errors  int64   `json:"errors"`
		Retries int64   `json:"retries"`
		P90Ms   float64 `json:"p90_ms"`
		MaxMs   float64 `json:"max_ms"`
	} `json:"total"`
	Types []struct {
		Name  string  `json:"name"`
		Count int64   `json:"count"`
		P90Ms float64 `json:"p90_ms"`
	} `json:"types"`
	PerTxn *struct {
		ClientCPUUs     float64 `json:"client_cpu_us"`
		ContextSwitches float64 `json:"context_switches"`
	} `json:"per_txn"`
}

// measured is one sledge run as this tool saw it.
type measured struct {
	res        result
	args       []string
	peakKB     int64 // VmHWM at the last reading
	sampledKB  int64 // highest sampled VmRSS
	sampledAt  time.Duration
	threads    int64 // at the sampled peak
	wall       time.Duration
	cpu        time.Duration // user+sys of the whole process, from its rusage
	heapMaxMB  int64
	samples    []sample
	vus, conns int
}

type sample struct {
	at      time.Duration
	rssKB   int64
	hwmKB   int64
	threads int64
	cpuPct  float64 // of one core since the previous sample
	heapMB  int64
	tps     string
}

func run(ctx context.Context, o options) error {
	dir, err := os.MkdirTemp("", "sledge-manyvus-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	bin := filepath.Join(dir, "bin", "sledge")
	build := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/sledge")
	build.Dir = child.ModuleRoot()
	if out, err := build.CombinedOutput(); err != nil {
		return fmt.Errorf("go build: %v\n%s", err, out)
	}

	// The run's connections, the build's and the control session, with room.
	maxConns := o.connections + 50
	srv, err := testdb.StartPostgresWith(ctx, "max_connections="+strconv.Itoa(maxConns))
	if err != nil {
		return fmt.Errorf("start postgres: %w", err)
	}
	defer func() {
		if err := srv.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "manyvus: stop server:", err)
		}
	}()
	url := fmt.Sprintf("postgres://%s:%s@%s:%d/manyvus", srv.User, srv.Password, srv.Host, srv.Port)
	runURL := url
	if o.io != "" {
		runURL += "?io=" + o.io
	}
	env := append(os.Environ(), "XDG_DATA_HOME="+dir, "SLEDGE_JOBS_DB=", "SLEDGE_DB=")

	fmt.Printf("manyvus: PostgreSQL %s (max_connections %d), %d warehouses; %s\n", srv.Version, maxConns, o.warehouses, hostLine())
	t0 := time.Now()
	bargs := []string{"build", "tpcc", "--db", url, "--warehouses", strconv.Itoa(o.warehouses), "--json", "--no-job"}
	if o.buildVUs > 0 {
		bargs = append(bargs, "--build-vus", strconv.Itoa(o.buildVUs))
	}
	b := exec.CommandContext(ctx, bin, bargs...)
	b.Env = env
	if out, err := b.CombinedOutput(); err != nil {
		return fmt.Errorf("sledge build: %v\n%s", err, out)
	}
	fmt.Printf("manyvus: built %d warehouses in %.0f s\n", o.warehouses, time.Since(t0).Seconds())

	if o.hold > 0 {
		fmt.Printf("manyvus: holding for %s: %s (sledge: %s)\n", o.hold, runURL, bin)
		select {
		case <-time.After(o.hold):
		case <-ctx.Done():
		}
		return nil
	}
	ceiling := ceilingPerTerminal()
	var base *measured
	if o.baseline > 0 {
		base, err = runOnce(ctx, bin, env, runURL, srv.Password, o, o.baseline, o.baseRampup, o.baseDur)
		if err != nil {
			return fmt.Errorf("baseline run: %w", err)
		}
		report(base, o, ceiling)
	}
	m, err := runOnce(ctx, bin, env, runURL, srv.Password, o, o.vus, o.rampup, o.duration)
	if err != nil {
		return err
	}
	report(m, o, ceiling)
	if base != nil {
		per := float64(m.peakKB-base.peakKB) / float64(m.vus-base.vus)
		fmt.Printf("\nmemory per terminal: (%s − %s) ÷ (%d − %d VUs) = %.1f KB per terminal (peak RSS, VmHWM); at %d connections both\n",
			mib(m.peakKB), mib(base.peakKB), m.vus, base.vus, per, o.connections)
	}
	return nil
}

// runOnce runs sledge run with vus VUs and samples it.
func runOnce(ctx context.Context, bin string, env []string, url, password string, o options, vus int, rampup, duration time.Duration) (*measured, error) {
	args := []string{"run", "tpcc", "--db", url, "--vus", strconv.Itoa(vus), "--connections", strconv.Itoa(o.connections),
		"--keying-thinking", "--rampup", rampup.String(), "--duration", duration.String(), "-P", strconv.Itoa(max(1, int(o.every.Seconds()))), "--json"}
	if o.mode != "" {
		args = append(args, "--mode", o.mode)
	}
	shown := child.RedactArgs(args, password)
	fmt.Printf("\nmanyvus: sledge %s\n", strings.Join(shown, " "))
	cmd := exec.Command(bin, args...)
	// The live heap after each collection, beside RSS.
	cmd.Env = append(env, "GODEBUG=gctrace=1")
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	errPipe, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	pid := cmd.Process.Pid

	var mu sync.Mutex
	lastTPS := ""
	heapMB, heapMax := int64(-1), int64(0)
	var tail []string
	readDone := make(chan struct{})
	go func() {
		defer close(readDone)
		sc := bufio.NewScanner(errPipe)
		for sc.Scan() {
			line := sc.Text()
			mu.Lock()
			if tps, ok := child.ProgressTPS(line); ok {
				lastTPS = tps
			} else if live, ok := child.GCLive(line); ok {
				heapMB = live
				heapMax = max(heapMax, live)
			} else {
				tail = append(tail, line)
				if len(tail) > 20 {
					tail = tail[1:]
				}
			}
			mu.Unlock()
		}
		_, _ = io.Copy(io.Discard, errPipe)
	}()
	waitDone := make(chan error, 1)
	go func() {
		<-readDone
		waitDone <- cmd.Wait()
	}()

	m := &measured{args: shown, vus: vus, conns: o.connections}
	tick := time.NewTicker(o.every)
	defer tick.Stop()
	fmt.Printf("\n| elapsed | RSS MiB | peak (VmHWM) MiB | live heap MB | threads | sledge CPU %% of a core | tps (last -P line) |\n|---|---|---|---|---|---|---|\n")
	lastTicks, lastAt := int64(-1), time.Duration(0)
	record := func() {
		st, err := child.ProcStatus(pid)
		if err != nil {
			return // the process is ending
		}
		at := time.Since(start)
		ticks, terr := child.ProcTicks(pid)
		cpu := math.NaN()
		if terr == nil && lastTicks >= 0 {
			cpu = float64(ticks-lastTicks) / child.ClockTicks / (at - lastAt).Seconds() * 100
		}
		if terr == nil {
			lastTicks, lastAt = ticks, at
		}
		mu.Lock()
		s := sample{at: at, rssKB: st.RSSKB, hwmKB: st.HWMKB, threads: st.Threads, cpuPct: cpu, heapMB: heapMB, tps: lastTPS}
		mu.Unlock()
		m.samples = append(m.samples, s)
		m.peakKB = max(m.peakKB, st.HWMKB)
		if st.RSSKB > m.sampledKB {
			m.sampledKB, m.sampledAt, m.threads = st.RSSKB, at, st.Threads
		}
		cpuText := "-"
		if !math.IsNaN(cpu) {
			cpuText = fmt.Sprintf("%.1f", cpu)
		}
		fmt.Printf("| %s | %.1f | %.1f | %d | %d | %s | %s |\n", child.Clock(at), float64(st.RSSKB)/1024, float64(st.HWMKB)/1024,
			s.heapMB, st.Threads, cpuText, s.tps)
	}
	var runErr error
loop:
	for {
		select {
		case <-tick.C:
			record()
		case runErr = <-waitDone:
			break loop
		case <-ctx.Done():
			_ = cmd.Process.Signal(os.Interrupt)
			<-waitDone
			return nil, errors.New("interrupted")
		}
	}
	m.wall = time.Since(start)
	if ps := cmd.ProcessState; ps != nil {
		m.cpu = ps.UserTime() + ps.SystemTime()
		if ru, ok := ps.SysUsage().(*syscall.Rusage); ok {
			m.peakKB = max(m.peakKB, ru.Maxrss) // KB on Linux
		}
	}
	mu.Lock()
	m.heapMaxMB = heapMax
	errTail := strings.Join(tail, "\n")
	mu.Unlock()
	if runErr != nil {
		return nil, fmt.Errorf("sledge run: %v\n%s", runErr, errTail)
	}
	if err := json.Unmarshal(bytes.TrimSpace(stdout.Bytes()), &m.res); err != nil {
		return nil, fmt.Errorf("sledge run --json: %v: %s", err, stdout.String())
	}
	return m, nil
}

// report prints one run's figures against the goals.
func report(m *measured, o options, ceiling float64) {
	r := m.res
	fmt.Printf("\nrun: %d VUs over %d connections, mode %s, measured %.0f s: %d transactions (%d errors, %d retries), %.1f tps\n",
		r.VUs, r.Connections, r.Mode, r.MeasuredS, r.Total.Count, r.Total.Errors, r.Total.Retries, r.TPS)
	goal := func(ok bool) string {
		if ok {
			return "met"
		}
		return "missed"
	}
	rss := float64(m.peakKB) / 1024
	fmt.Printf("peak RSS: %.1f MiB (VmHWM); highest sample %.1f MiB at %s with %d threads; live heap at most %d MB; goal < %.0f MiB: %s\n",
		rss, float64(m.sampledKB)/1024, child.Clock(m.sampledAt), m.threads, m.heapMaxMB, o.maxRSSMiB, goal(rss < o.maxRSSMiB))
	if r.PerTxn != nil && r.MeasuredS > 0 {
		cpuS := r.PerTxn.ClientCPUUs * float64(r.Total.Count) / 1e6
		pct := cpuS / r.MeasuredS * 100
		fmt.Printf("sledge CPU over the measured interval: %.1f s in %.0f s = %.2f%% of one core (%.1f µs and %.2f context switches per transaction); goal < %.0f%%: %s\n",
			cpuS, r.MeasuredS, pct, r.PerTxn.ClientCPUUs, r.PerTxn.ContextSwitches, o.maxCPUPct, goal(pct < o.maxCPUPct))
	} else {
		fmt.Println("sledge CPU over the measured interval: not reported (no per_txn in the run's JSON)")
	}
	fmt.Printf("sledge CPU over the whole run (connecting, ramp-up, stop; rusage): %.1f s in %.0f s = %.2f%% of one core\n",
		m.cpu.Seconds(), m.wall.Seconds(), m.cpu.Seconds()/m.wall.Seconds()*100)
	if r.NOPM != nil {
		perT := *r.NOPM / float64(r.VUs)
		fmt.Printf("NOPM %.0f: %.3f per terminal against a ceiling of %.3f (%.0f for %d terminals): %.1f%% of it\n",
			*r.NOPM, perT, ceiling, ceiling*float64(r.VUs), r.VUs, perT/ceiling*100)
	}
	fmt.Printf("TPM %.0f (%s), client %.0f\n", r.TPM, r.TPMSource, r.TPMClient)
	if r.TPMNote != "" {
		fmt.Printf("  (%s)\n", r.TPMNote)
	}
	if w := r.ConnWait; w != nil {
		fmt.Printf("connection wait: mean %.3f ms, max %.1f ms over %d transactions\n", w.MeanMs, w.MaxMs, w.Count)
	}
	for _, t := range r.Types {
		if t.Name == "neword" {
			fmt.Printf("neword p90 %.2f ms (latency includes the connection wait); all types p90 %.2f ms, max %.1f ms\n", t.P90Ms, r.Total.P90Ms, r.Total.MaxMs)
		}
	}
}

func mib(kb int64) string { return fmt.Sprintf("%.1f MiB", float64(kb)/1024) }

// hostLine names the machine: CPUs and load, which the figures depend on.
func hostLine() string {
	load, _ := os.ReadFile("/proc/loadavg")
	f := strings.Fields(string(load))
	l := "?"
	if len(f) >= 3 {
		l = strings.Join(f[:3], " ")
	}
	return fmt.Sprintf("host: %d CPUs, load average %s", runtime.NumCPU(), l)
}
