// Command soak is sledge's memory soak test (make soak, issue 6 item 7):
// it builds sledge, starts a private PostgreSQL (internal/testdb), builds a
// small schema, then runs `sledge run` with many virtual users for a long
// time while sampling the sledge process's resident memory (VmRSS from
// /proc/<pid>/status). It prints RSS over time, the RSS after warm-up
// against the RSS at the end, the growth in percent and in KB per minute,
// and exits 1 when RSS grew more than -max-growth percent after warm-up.
//
// With -agent it soaks sledge agent instead (make soak-agent, agent.go).
//
// Not part of make test: it runs for ten minutes by default. The machine is
// usually shared, so make soak runs it under nice; the server it starts
// inherits the niceness.
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
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/sledge-bench/sledge/internal/testdb"
)

type options struct {
	duration  time.Duration
	warmup    time.Duration
	every     time.Duration
	vus       int
	workload  string
	scale     int
	mode      string
	maxGrowth float64
	dbKind    string
	agent     bool
}

func main() {
	var o options
	flag.DurationVar(&o.duration, "duration", 10*time.Minute, "measured run time of sledge run")
	flag.DurationVar(&o.warmup, "warmup", time.Minute, "warm-up: RSS growth is measured from the first sample after it")
	flag.DurationVar(&o.every, "every", 5*time.Second, "RSS sampling interval")
	flag.IntVar(&o.vus, "vus", 32, "virtual users")
	flag.StringVar(&o.workload, "workload", "tpcc", "tpcc (scale = warehouses) or tpcb (scale = pgbench scale)")
	flag.IntVar(&o.scale, "scale", 4, "warehouses (tpcc) or scale factor (tpcb)")
	flag.StringVar(&o.mode, "mode", "", "sledge run --mode (default: the database's default)")
	flag.Float64Var(&o.maxGrowth, "max-growth", 10, "fail when RSS grows more than this many percent after warm-up")
	flag.StringVar(&o.dbKind, "db", "postgres", "postgres or mariadb")
	flag.BoolVar(&o.agent, "agent", false, "soak sledge agent instead of sledge run: the agent watches a PostgreSQL with 200 churning connections (-every defaults to 10s)")
	flag.Parse()
	if o.agent {
		everySet := false
		flag.Visit(func(f *flag.Flag) { everySet = everySet || f.Name == "every" })
		if !everySet {
			o.every = 10 * time.Second
		}
	}
	if o.warmup >= o.duration {
		fmt.Fprintln(os.Stderr, "soak: -warmup must be shorter than -duration")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	runSoak := run
	if o.agent {
		runSoak = runAgent
	}
	ok, err := runSoak(ctx, o)
	if err != nil {
		fmt.Fprintln(os.Stderr, "soak:", err)
		os.Exit(1)
	}
	if !ok {
		os.Exit(1)
	}
}

// sample is one RSS reading of the sledge process.
type sample struct {
	at      time.Duration // since sledge run started
	rssKB   int64
	threads int64
	tps     string // the last -P progress line's rate, as printed
	heapMB  int64  // live heap after the last GC (GODEBUG=gctrace=1), -1: none yet
	gcs     int64  // GCs so far
}

func run(ctx context.Context, o options) (bool, error) {
	dir, err := os.MkdirTemp("", "sledge-soak-")
	if err != nil {
		return false, err
	}
	defer os.RemoveAll(dir)
	// The binary lives beside the data home, not in it: XDG_DATA_HOME=dir
	// makes sledge create dir/sledge.
	bin := filepath.Join(dir, "bin", "sledge")
	build := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/sledge")
	build.Dir = child.ModuleRoot()
	if out, err := build.CombinedOutput(); err != nil {
		return false, fmt.Errorf("go build: %v\n%s", err, out)
	}

	var srv *testdb.Server
	switch o.dbKind {
	case "postgres":
		srv, err = testdb.StartPostgres(ctx)
	case "mariadb":
		srv, err = testdb.StartMariaDB(ctx)
	default:
		return false, fmt.Errorf("-db %q: use postgres or mariadb", o.dbKind)
	}
	if err != nil {
		return false, fmt.Errorf("start %s: %w", o.dbKind, err)
	}
	defer func() {
		if err := srv.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "soak: stop server:", err)
		}
	}()
	scheme := map[string]string{"postgres": "postgres", "mariadb": "mysql"}[o.dbKind]
	url := fmt.Sprintf("%s://%s:%s@%s:%d/soak", scheme, srv.User, srv.Password, srv.Host, srv.Port)
	env := append(os.Environ(), "XDG_DATA_HOME="+dir, "SLEDGE_JOBS_DB=", "SLEDGE_DB=")

	scaleFlag := "--warehouses"
	if o.workload == "tpcb" {
		scaleFlag = "--scale"
	}
	fmt.Printf("soak: %s %s, %s %d, on %s %s\n", "sledge", o.workload, strings.TrimPrefix(scaleFlag, "--"), o.scale, o.dbKind, srv.Version)
	t0 := time.Now()
	b := exec.CommandContext(ctx, bin, "build", o.workload, "--db", url, scaleFlag, strconv.Itoa(o.scale), "--json", "--no-job")
	b.Env = env
	if out, err := b.CombinedOutput(); err != nil {
		return false, fmt.Errorf("sledge build: %v\n%s", err, out)
	}
	fmt.Printf("soak: built in %.1f s\n", time.Since(t0).Seconds())

	args := []string{"run", o.workload, "--db", url, "--vus", strconv.Itoa(o.vus), "--rampup", "0s",
		"--duration", o.duration.String(), "-P", strconv.Itoa(max(1, int(o.every.Seconds()))), "--json"}
	if o.mode != "" {
		args = append(args, "--mode", o.mode)
	}
	fmt.Printf("soak: sledge %s\n", strings.Join(child.RedactArgs(args, srv.Password), " "))
	cmd := exec.Command(bin, args...)
	// The runtime's GC trace gives the live heap after each collection: RSS
	// can grow while the heap does not (pages of memory allocated up front,
	// such as the latency histograms, are touched only as values land in
	// them), and the heap is what a leak would grow.
	cmd.Env = append(env, "GODEBUG=gctrace=1")
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	errPipe, err := cmd.StderrPipe()
	if err != nil {
		return false, err
	}
	if err := cmd.Start(); err != nil {
		return false, err
	}
	start := time.Now()
	pid := cmd.Process.Pid

	// The progress lines (-P) give each sample the throughput of the moment.
	var mu sync.Mutex
	lastTPS := ""
	heapMB, gcs := int64(-1), int64(0)
	var tail []string // the last stderr lines, for a failure
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
				gcs++
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

	var samples []sample
	tick := time.NewTicker(o.every)
	defer tick.Stop()
	fmt.Printf("\n| elapsed | RSS MiB | RSS KB | live heap MB (last GC) | GCs | threads | tps (last -P line) |\n|---|---|---|---|---|---|---|\n")
	record := func() {
		st, err := child.ProcStatus(pid)
		if err != nil {
			return // the process is ending
		}
		mu.Lock()
		s := sample{at: time.Since(start), rssKB: st.RSSKB, threads: st.Threads, tps: lastTPS, heapMB: heapMB, gcs: gcs}
		mu.Unlock()
		samples = append(samples, s)
		fmt.Printf("| %s | %.1f | %d | %d | %d | %d | %s |\n", child.Clock(s.at), float64(s.rssKB)/1024, s.rssKB, s.heapMB, s.gcs, s.threads, s.tps)
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
			runErr = <-waitDone
			return false, errors.New("interrupted")
		}
	}
	if runErr != nil {
		mu.Lock()
		defer mu.Unlock()
		return false, fmt.Errorf("sledge run: %v\n%s", runErr, strings.Join(tail, "\n"))
	}
	var sum struct {
		TPS   float64 `json:"tps"`
		NOPM  float64 `json:"nopm"`
		TPM   float64 `json:"tpm"`
		Mode  string  `json:"mode"`
		Total struct {
			Count   int64 `json:"count"`
			Errors  int64 `json:"errors"`
			Retries int64 `json:"retries"`
		} `json:"total"`
	}
	if err := json.Unmarshal(bytes.TrimSpace(stdout.Bytes()), &sum); err != nil {
		return false, fmt.Errorf("sledge run --json: %v: %s", err, stdout.String())
	}
	fmt.Printf("\nrun: mode %s, %d VUs, %s: %d transactions (%d errors, %d retries), %.0f tps, NOPM %.0f, TPM %.0f\n",
		sum.Mode, o.vus, o.duration, sum.Total.Count, sum.Total.Errors, sum.Total.Retries, sum.TPS, sum.NOPM, sum.TPM)
	return report(samples, o), nil
}

// report prints the growth after warm-up and says whether it is within
// bounds.
func report(samples []sample, o options) bool {
	after, growth, ok := rssGrowth(samples, o.warmup)
	if !ok {
		return false
	}
	base, end := after[0], after[len(after)-1]
	if base.heapMB >= 0 && end.heapMB >= 0 {
		maxHeap := base.heapMB
		for _, s := range after {
			maxHeap = max(maxHeap, s.heapMB)
		}
		fmt.Printf("live heap after GC: %d MB after warm-up, %d MB at the end, at most %d MB after warm-up; %d GCs in all\n",
			base.heapMB, end.heapMB, maxHeap, end.gcs)
	}
	if growth > o.maxGrowth {
		fmt.Printf("FAIL: RSS grew %.1f%% after warm-up, more than %.0f%%\n", growth, o.maxGrowth)
		return false
	}
	fmt.Printf("PASS: RSS grew %.1f%% after warm-up (limit %.0f%%)\n", growth, o.maxGrowth)
	return true
}

// rssGrowth prints the RSS after warm-up against the end and the peak, and
// returns the samples after warm-up and the growth in percent; ok is false
// when there are too few of them.
func rssGrowth(samples []sample, warmup time.Duration) (after []sample, growth float64, ok bool) {
	for _, s := range samples {
		if s.at >= warmup {
			after = append(after, s)
		}
	}
	if len(after) < 2 {
		fmt.Println("soak: too few samples after warm-up")
		return nil, 0, false
	}
	base, end := after[0], after[len(after)-1]
	peak := base
	for _, s := range after {
		if s.rssKB > peak.rssKB {
			peak = s
		}
	}
	minutes := (end.at - base.at).Minutes()
	growth = float64(end.rssKB-base.rssKB) / float64(base.rssKB) * 100
	fmt.Printf("\nRSS after warm-up (%s): %d KB; at the end (%s): %d KB; peak after warm-up %d KB at %s\n",
		child.Clock(base.at), base.rssKB, child.Clock(end.at), end.rssKB, peak.rssKB, child.Clock(peak.at))
	fmt.Printf("growth after warm-up: %+.1f%% (%+.1f KB/min end to end over %.1f min; least-squares slope %+.1f KB/min); peak %+.1f%%\n",
		growth, float64(end.rssKB-base.rssKB)/minutes, minutes, slopeKBPerMin(after),
		float64(peak.rssKB-base.rssKB)/float64(base.rssKB)*100)
	return after, growth, true
}

// slopeKBPerMin is the least-squares slope of RSS over time.
func slopeKBPerMin(s []sample) float64 {
	var n, sx, sy, sxx, sxy float64
	for _, p := range s {
		x, y := p.at.Minutes(), float64(p.rssKB)
		n++
		sx += x
		sy += y
		sxx += x * x
		sxy += x * y
	}
	d := n*sxx - sx*sx
	if d == 0 {
		return 0
	}
	return (n*sxy - sx*sy) / d
}
