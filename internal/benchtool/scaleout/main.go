// Command scaleout measures issue 17's goal (make bench-scaleout): on one
// private PostgreSQL server with a TPC-C build, the same total of virtual
// users runs from 1, 2 and 4 local worker processes (`sledge run tpcc
// --workers N`), in a rotating order for -rounds rounds. For each N it
// reports the median NOPM and its ratio to one worker's, and the
// coordinator's own CPU per worker: the coordinator process's user+system
// time (/proc/PID/stat's utime+stime, which leave out its children, the
// workers) over the run's wall time, divided by N. Load goes only to the
// server's 127.0.0.1 address.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/sledge-bench/sledge/internal/testdb"
)

func main() {
	workers := flag.String("workers", "1,2,4", "worker counts to compare (the first is the baseline)")
	vus := flag.Int("vus", 8, "virtual users in all, split over the workers")
	warehouses := flag.Int("warehouses", 8, "TPC-C warehouses")
	rounds := flag.Int("rounds", 3, "rounds; each runs every worker count once, in a rotating order")
	rampup := flag.Duration("rampup", 5*time.Second, "ramp-up per run")
	duration := flag.Duration("duration", 30*time.Second, "measured interval per run")
	mode := flag.String("mode", "procedure", "sledge --mode")
	flag.Parse()
	var ns []int
	for _, s := range strings.Split(*workers, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 {
			fmt.Fprintf(os.Stderr, "scaleout: bad -workers %q\n", *workers)
			os.Exit(2)
		}
		ns = append(ns, n)
	}
	if err := run(ns, *vus, *warehouses, *rounds, *rampup, *duration, *mode); err != nil {
		fmt.Fprintln(os.Stderr, "scaleout:", err)
		os.Exit(1)
	}
}

type result struct {
	NOPM *float64 `json:"nopm"`
	TPM  float64  `json:"tpm"`
}

type sample struct {
	nopm   float64
	cpuPct float64 // coordinator's CPU, % of one core, per worker
}

func run(ns []int, vus, warehouses, rounds int, rampup, duration time.Duration, mode string) error {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "sledge-scaleout-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	bin := filepath.Join(dir, "sledge")
	if out, err := exec.Command("go", "build", "-o", bin, "./cmd/sledge").CombinedOutput(); err != nil {
		return fmt.Errorf("go build: %v\n%s", err, out)
	}
	srv, err := testdb.StartPostgres(ctx)
	if err != nil {
		return err
	}
	defer srv.Stop()
	u := fmt.Sprintf("postgres://%s:%s@%s:%d/scaleout", srv.User, srv.Password, srv.Host, srv.Port)
	env := append(os.Environ(), "XDG_DATA_HOME="+filepath.Join(dir, "data"))
	if _, _, err := sledge(bin, env, "build", "tpcc", "--db", u, "--warehouses", fmt.Sprint(warehouses), "--no-job"); err != nil {
		return err
	}
	got := map[int][]sample{}
	for r := 0; r < rounds; r++ {
		for i := range ns {
			n := ns[(i+r)%len(ns)] // rotate: each count runs first once
			args := []string{"run", "tpcc", "--db", u, "--mode", mode, "--vus", fmt.Sprint(vus),
				"--rampup", fmt.Sprint(rampup.Seconds()), "-T", duration.String(), "--json", "--no-job"}
			if n > 1 {
				args = append(args, "--workers", fmt.Sprint(n))
			}
			out, cpu, err := sledge(bin, env, args...)
			if err != nil {
				return err
			}
			var res result
			if err := json.Unmarshal(out, &res); err != nil || res.NOPM == nil {
				return fmt.Errorf("%d workers: no nopm in --json (%v): %s", n, err, out)
			}
			wall := rampup + duration
			s := sample{nopm: *res.NOPM, cpuPct: 100 * cpu.Seconds() / wall.Seconds() / float64(n)}
			got[n] = append(got[n], s)
			fmt.Fprintf(os.Stderr, "round %d: %d worker(s): NOPM %.0f, coordinator CPU %.3f%% of a core per worker\n", r+1, n, s.nopm, s.cpuPct)
		}
	}
	base := median(got[ns[0]], func(s sample) float64 { return s.nopm })
	fmt.Printf("TPC-C, %d warehouses, %d VUs in all, --mode %s, %s ramp-up + %s measured, %d rounds (rotating order), medians\n\n",
		warehouses, vus, mode, rampup, duration, rounds)
	fmt.Println("| workers | NOPM | ÷ 1 worker | coordinator CPU per worker (% of a core) |")
	fmt.Println("|---|---|---|---|")
	for _, n := range ns {
		nopm := median(got[n], func(s sample) float64 { return s.nopm })
		cpu := median(got[n], func(s sample) float64 { return s.cpuPct })
		cpuText := fmt.Sprintf("%.3f", cpu)
		if n == 1 {
			cpuText = "- (no coordinator)"
		}
		fmt.Printf("| %d | %.0f | %.3f | %s |\n", n, nopm, nopm/base, cpuText)
	}
	return nil
}

func median(s []sample, f func(sample) float64) float64 {
	x := make([]float64, len(s))
	for i, v := range s {
		x[i] = f(v)
	}
	slices.Sort(x)
	if len(x) == 0 {
		return 0
	}
	return x[len(x)/2]
}

// sledge runs bin and returns its stdout and its own CPU time, sampled from
// /proc while it runs (the last reading before it exits).
func sledge(bin string, env []string, args ...string) ([]byte, time.Duration, error) {
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(bin, args...)
	cmd.Env = env
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		return nil, 0, err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var cpu time.Duration
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case err := <-done:
			if err != nil {
				return nil, 0, fmt.Errorf("sledge %s: %v: %s", strings.Join(args, " "), err, stderr.String())
			}
			return stdout.Bytes(), cpu, nil
		case <-tick.C:
			if c, ok := ownCPU(cmd.Process.Pid); ok {
				cpu = c
			}
		}
	}
}

// ownCPU is utime+stime of pid from /proc/PID/stat: the process's own
// time, without its children's (cutime, cstime).
func ownCPU(pid int) (time.Duration, bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, false
	}
	// Fields after the command name, which is in parentheses and may
	// hold spaces: state is field 3, utime 14, stime 15.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, false
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0, false
	}
	ut, err1 := strconv.ParseInt(f[11], 10, 64)
	st, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, false
	}
	const hz = 100 // USER_HZ on Linux
	return time.Duration(ut+st) * time.Second / hz, true
}
