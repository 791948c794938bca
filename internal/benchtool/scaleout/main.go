// Command scaleout measures issue 17's goal (make bench-scaleout): on one
// private PostgreSQL server with a TPC-C build, the same total of virtual
// users runs from 1, 2 and 4 local worker processes (`sledge run tpcc
// --workers N`; 0: one sledge without --workers, for reference), in an order reversed every other round, for -rounds rounds.
// For each N it reports the median NOPM, the median of its ratios to the
// baseline's NOPM in the same round, the client CPU per transaction, and the
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

	"github.com/sledge-bench/sledge/internal/benchtool/child"
	"github.com/sledge-bench/sledge/internal/testdb"
)

func main() {
	workers := flag.String("workers", "1,2,4,0", "worker counts to compare, the first the baseline; 0 is one sledge without --workers; N:VAR=V runs N workers with that environment setting (e.g. 4:GOMAXPROCS=2)")
	vus := flag.Int("vus", 8, "virtual users in all, split over the workers")
	warehouses := flag.Int("warehouses", 8, "TPC-C warehouses")
	rounds := flag.Int("rounds", 3, "rounds; each runs every worker count once, in a rotating order")
	rampup := flag.Duration("rampup", 5*time.Second, "ramp-up per run")
	duration := flag.Duration("duration", 30*time.Second, "measured interval per run")
	mode := flag.String("mode", "procedure", "sledge --mode")
	rate := flag.Float64("rate", 0, "sledge -R: transactions per second in all (0: as fast as possible)")
	flag.Parse()
	var ns []spec
	for _, s := range strings.Split(*workers, ",") {
		s = strings.TrimSpace(s)
		num, env, _ := strings.Cut(s, ":")
		n, err := strconv.Atoi(num)
		if err != nil || n < 0 || (env != "" && !strings.Contains(env, "=")) {
			fmt.Fprintf(os.Stderr, "scaleout: bad -workers %q\n", *workers)
			os.Exit(2)
		}
		x := spec{n: n, name: s}
		if n == 0 {
			x.name = "none (one process)"
		}
		if env != "" {
			x.env = []string{env}
		}
		ns = append(ns, x)
	}
	if err := run(ns, *vus, *warehouses, *rounds, *rampup, *duration, *mode, *rate); err != nil {
		fmt.Fprintln(os.Stderr, "scaleout:", err)
		os.Exit(1)
	}
}

type result struct {
	NOPM   *float64 `json:"nopm"`
	TPM    float64  `json:"tpm"`
	PerTxn *struct {
		ClientCPUUs *float64 `json:"client_cpu_us"`
	} `json:"per_txn"`
}

// spec is one way to run: N workers (0: no --workers) and extra
// environment settings.
type spec struct {
	n    int
	env  []string
	name string
}

type sample struct {
	nopm     float64
	ratio    float64 // nopm ÷ the baseline's in the same round
	clientUs float64 // the run's client CPU per transaction, µs (workers together)
	cpuPct   float64 // coordinator's CPU, % of one core, per worker
}

func run(ns []spec, vus, warehouses, rounds int, rampup, duration time.Duration, mode string, rate float64) error {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "sledge-scaleout-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	bin := filepath.Join(dir, "sledge")
	if err := child.BuildSledge(bin); err != nil {
		return err
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
	got := map[string][]sample{}
	for r := 0; r < rounds; r++ {
		// The database slows as TPC-C's tables grow: odd rounds run the
		// counts in reverse, so a steady drift cancels over two rounds,
		// and each count is compared with the baseline of its own round.
		order := slices.Clone(ns)
		if r%2 == 1 {
			slices.Reverse(order)
		}
		round := map[string]sample{}
		for _, sp := range order {
			n := sp.n
			args := []string{"run", "tpcc", "--db", u, "--mode", mode, "--vus", fmt.Sprint(vus),
				"--rampup", fmt.Sprint(rampup.Seconds()), "-T", duration.String(), "--json", "--no-job"}
			if n > 0 {
				args = append(args, "--workers", fmt.Sprint(n))
			}
			if rate > 0 {
				args = append(args, "-R", fmt.Sprint(rate))
			}
			out, cpu, err := sledge(bin, append(slices.Clone(env), sp.env...), args...)
			if err != nil {
				return err
			}
			var res result
			if err := json.Unmarshal(out, &res); err != nil || res.NOPM == nil {
				return fmt.Errorf("%s workers: no nopm in --json (%v): %s", sp.name, err, out)
			}
			wall := rampup + duration
			s := sample{nopm: *res.NOPM, cpuPct: 100 * cpu.Seconds() / wall.Seconds() / float64(max(n, 1))}
			if res.PerTxn != nil && res.PerTxn.ClientCPUUs != nil {
				s.clientUs = *res.PerTxn.ClientCPUUs
			}
			round[sp.name] = s
			fmt.Fprintf(os.Stderr, "round %d: %s worker(s): NOPM %.0f, client CPU %.1f µs/txn, coordinator CPU %.3f%% of a core per worker\n",
				r+1, sp.name, s.nopm, s.clientUs, s.cpuPct)
		}
		for name, s := range round {
			s.ratio = s.nopm / round[ns[0].name].nopm
			got[name] = append(got[name], s)
		}
	}
	how := "as fast as possible"
	if rate > 0 {
		how = fmt.Sprintf("-R %g transactions/s in all", rate)
	}
	fmt.Printf("TPC-C, %d warehouses, %d VUs in all, --mode %s, %s, %s ramp-up + %s measured, %d rounds (order reversed every other round), medians\n\n",
		warehouses, vus, mode, how, rampup, duration, rounds)
	fmt.Printf("| workers | NOPM | ÷ %s (same round) | client CPU µs/txn (all processes) | coordinator CPU per worker (%% of a core) |\n", ns[0].name)
	fmt.Println("|---|---|---|---|---|")
	for _, sp := range ns {
		g := got[sp.name]
		nopm := child.Median(g, func(s sample) float64 { return s.nopm })
		ratio := child.Median(g, func(s sample) float64 { return s.ratio })
		client := child.Median(g, func(s sample) float64 { return s.clientUs })
		cpu := child.Median(g, func(s sample) float64 { return s.cpuPct })
		cpuText := fmt.Sprintf("%.3f", cpu)
		if sp.n == 0 {
			cpuText = "- (no coordinator)"
		}
		fmt.Printf("| %s | %.0f | %.3f | %.1f | %s |\n", sp.name, nopm, ratio, client, cpuText)
	}
	return nil
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
	t, err := child.ProcTicks(pid)
	if err != nil {
		return 0, false
	}
	return time.Duration(t) * time.Second / child.ClockTicks, true
}
