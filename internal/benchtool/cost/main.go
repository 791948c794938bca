// Command cost measures what sledge's default accounting costs against
// --no-cost (make bench-cost, issue 26): the per-transaction counting
// (round trips, bytes, CPU, context switches) and the server-cost sampler
// (the database's counters and wait samples, the server's processes and
// both hosts from /proc) together. It builds sledge, starts a private
// PostgreSQL (internal/testdb, max_connections raised for -connections),
// builds tpcb and TPC-C, then runs, in alternating rounds (the order
// reversed every other round),
//
//	sledge run tpcb --builtin tpcb-like --mode prepared -c 4 -T D --json   (default, then --no-cost)
//	sledge run tpcc -c 200 -T D --json                                    (default, then --no-cost)
//
// without ramp-up, and reports each run's CPU per transaction: the whole
// process's user + system time as the kernel reports it to the parent
// (connecting, the sampler's start and stop included) over the
// transactions the run counted. It prints the medians and the ratio of
// the default to --no-cost (goal: at most 1.02). The machine's load
// average is printed at the start and the end: the figures of a shared
// machine are noisy, the ratio of alternating rounds less so.
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
	"strconv"
	"strings"
	"time"

	"github.com/sledge-bench/sledge/internal/benchtool/child"
	"github.com/sledge-bench/sledge/internal/testdb"
)

type options struct {
	parts       []string
	rounds      int
	duration    time.Duration
	clients     int
	connections int
	scale       int
	warehouses  int
	profile     string
}

// sample is one run.
type sample struct {
	tps   float64
	txns  int64
	cpuUs float64 // whole process, per transaction
}

func main() {
	var o options
	parts := flag.String("parts", "tpcb,tpcc", "what to measure, comma-separated: tpcb (tpcb-like, prepared, -c -clients) and tpcc (TPC-C, -c -connections)")
	flag.IntVar(&o.rounds, "rounds", 5, "alternating rounds: each runs the default and --no-cost once")
	flag.DurationVar(&o.duration, "duration", 20*time.Second, "each run's measured interval (no ramp-up)")
	flag.IntVar(&o.clients, "clients", 4, "tpcb's virtual users, each with its connection")
	flag.IntVar(&o.connections, "connections", 200, "TPC-C's virtual users, each with its connection")
	flag.IntVar(&o.scale, "scale", 10, "tpcb's scale")
	flag.IntVar(&o.warehouses, "warehouses", 10, "TPC-C's warehouses")
	flag.StringVar(&o.profile, "profile", "", "write each sledge run's CPU profile to this directory")
	flag.Parse()
	for _, p := range strings.Split(*parts, ",") {
		switch p = strings.TrimSpace(p); p {
		case "tpcb", "tpcc":
			o.parts = append(o.parts, p)
		default:
			fail(2, fmt.Sprintf("-parts: unknown part %q (tpcb, tpcc)", p))
		}
	}
	switch {
	case len(o.parts) == 0:
		fail(2, "-parts: nothing to measure")
	case o.rounds < 1:
		fail(2, "-rounds must be at least 1")
	case o.duration < time.Second:
		fail(2, "-duration must be at least 1s")
	case o.clients < 1 || o.connections < 1 || o.scale < 1 || o.warehouses < 1:
		fail(2, "-clients, -connections, -scale and -warehouses must be at least 1")
	}
	if err := run(context.Background(), o); err != nil {
		fail(1, err.Error())
	}
}

func fail(code int, msg string) {
	fmt.Fprintln(os.Stderr, "cost:", msg)
	os.Exit(code)
}

func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

func run(ctx context.Context, o options) error {
	dir, err := os.MkdirTemp("", "sledge-cost-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	bin := filepath.Join(dir, "sledge")
	if err := child.BuildSledge(bin); err != nil {
		return err
	}
	srv, err := testdb.StartPostgresWith(ctx, "max_connections="+strconv.Itoa(o.connections+50))
	if err != nil {
		return fmt.Errorf("start postgres: %w", err)
	}
	defer srv.Stop()
	url := func(db string) string {
		return fmt.Sprintf("postgres://%s:%s@%s:%d/%s", srv.User, srv.Password, srv.Host, srv.Port, db)
	}
	redact := func(s string) string { return strings.ReplaceAll(s, srv.Password, "***") }
	sledge := func(args ...string) ([]byte, *os.ProcessState, error) {
		cmd := exec.Command(bin, args...)
		var out, errOut bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errOut
		err := cmd.Run()
		if err != nil {
			return nil, nil, fmt.Errorf("sledge %s: %v: %s", redact(strings.Join(args, " ")), err, redact(errOut.String()))
		}
		return out.Bytes(), cmd.ProcessState, nil
	}
	fmt.Printf("cost: PostgreSQL %s (max_connections %d); load average at the start %s\n", srv.Version, o.connections+50, loadavg())
	type part struct {
		name, title string
		args        []string
	}
	var todo []part
	for _, p := range o.parts {
		start := time.Now()
		switch p {
		case "tpcb":
			if _, _, err := sledge("build", "tpcb", "--db", url("costb"), "--scale", strconv.Itoa(o.scale), "--no-job"); err != nil {
				return err
			}
			todo = append(todo, part{"tpcb", fmt.Sprintf("tpcb-like, prepared, -c %d", o.clients),
				[]string{"run", "tpcb", "--db", url("costb"), "--builtin", "tpcb-like", "--mode", "prepared", "-c", strconv.Itoa(o.clients)}})
		case "tpcc":
			if _, _, err := sledge("build", "tpcc", "--db", url("costc"), "--warehouses", strconv.Itoa(o.warehouses), "--no-job"); err != nil {
				return err
			}
			todo = append(todo, part{"tpcc", fmt.Sprintf("TPC-C, procedure, -c %d", o.connections),
				[]string{"run", "tpcc", "--db", url("costc"), "-c", strconv.Itoa(o.connections)}})
		}
		fmt.Printf("cost: built %s in %.0f s\n", p, time.Since(start).Seconds())
	}
	secs := strconv.Itoa(int(o.duration.Seconds()))
	variants := []string{"default", "--no-cost"}
	fmt.Printf("\n%d alternating rounds of %s each; CPU per transaction of the whole sledge process (rusage)\n\n", o.rounds, o.duration)
	fmt.Println("| work | round | sledge | tps | transactions | CPU µs/txn |")
	fmt.Println("|---|---|---|---|---|---|")
	results := map[string][2][]sample{}
	for _, p := range todo {
		var res [2][]sample
		for r := 1; r <= o.rounds; r++ {
			order := []int{0, 1}
			if r%2 == 0 {
				order = []int{1, 0}
			}
			for _, v := range order {
				args := append(append([]string(nil), p.args...), "--rampup", "0s", "-T", secs, "--json", "--no-job")
				if v == 1 {
					args = append(args, "--no-cost")
				}
				if o.profile != "" {
					args = append(args, "--cpuprofile", filepath.Join(o.profile, fmt.Sprintf("cost.%s.%s.%d.prof", p.name, strings.TrimLeft(variants[v], "-"), r)))
				}
				out, ps, err := sledge(args...)
				if err != nil {
					return err
				}
				var j struct {
					TPS   float64 `json:"tps"`
					Total struct {
						Count int64 `json:"count"`
					} `json:"total"`
				}
				if err := json.Unmarshal(out, &j); err != nil {
					return fmt.Errorf("sledge --json not understood: %v", err)
				}
				if j.Total.Count <= 0 {
					return fmt.Errorf("%s %s: no transactions", p.name, variants[v])
				}
				s := sample{tps: j.TPS, txns: j.Total.Count, cpuUs: child.CPUUs(ps) / float64(j.Total.Count)}
				res[v] = append(res[v], s)
				fmt.Printf("| %s | %d | %s | %.0f | %d | %.1f |\n", p.title, r, variants[v], s.tps, s.txns, s.cpuUs)
			}
		}
		results[p.name] = res
	}
	fmt.Printf("\nload average at the end %s\n\n", loadavg())
	fmt.Println("| work | median tps, default | median tps, --no-cost | median CPU µs/txn, default | median CPU µs/txn, --no-cost | CPU ratio default ÷ --no-cost (goal ≤ 1.02) | per-round ratios |")
	fmt.Println("|---|---|---|---|---|---|---|")
	tps := func(s sample) float64 { return s.tps }
	cpu := func(s sample) float64 { return s.cpuUs }
	for _, p := range todo {
		res := results[p.name]
		var rounds []string
		for i := range res[0] {
			rounds = append(rounds, fmt.Sprintf("%.3f", res[0][i].cpuUs/res[1][i].cpuUs))
		}
		d, n := child.Median(res[0], cpu), child.Median(res[1], cpu)
		fmt.Printf("| %s | %.0f | %.0f | %.1f | %.1f | %.3f | %s |\n", p.title, child.Median(res[0], tps), child.Median(res[1], tps),
			d, n, d/n, strings.Join(rounds, ", "))
	}
	return nil
}
