// Command vspgbench measures sledge's tpcb workload against pgbench itself
// (make bench-pgbench), side by side on one private PostgreSQL server: the
// builtin tpcb-like and select-only, pgbench -M prepared -c 4 -j 2 against
// sledge --mode prepared -c 4, same duration, alternating, several rounds
// each. It reports each tool's tps and client CPU per transaction (user +
// system time of the whole process, from its rusage as the kernel reports
// it to the parent) and their ratios. Load goes only to 127.0.0.1 or the
// server's unix socket in its temp directory.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/sledge-bench/sledge/internal/benchtool/child"
	"github.com/sledge-bench/sledge/internal/testdb"
)

func main() {
	builtins := flag.String("builtins", "tpcb-like,select-only", "pgbench builtins to compare")
	scale := flag.Int("scale", 10, "scale factor")
	clients := flag.Int("c", 4, "clients (sledge: virtual users)")
	threads := flag.Int("j", 2, "pgbench threads")
	rounds := flag.Int("rounds", 3, "rounds per tool and builtin, alternating")
	duration := flag.Int("T", 20, "seconds per run")
	transport := flag.String("transport", "tcp", "tcp or unix")
	hold = flag.Duration("hold", 0, "after the build, print the URL and keep the server up this long instead of measuring (for profiling by hand)")
	profile = flag.String("cpuprofile", "", "write sledge's CPU profile of each run to this file prefix")
	variantsFlag = flag.String("variants", "default", "sledge variants to measure, separated by ';': each is a list of NAME=VALUE environment settings and extra sledge options, or 'default' (e.g. 'default;--no-cost;GOMAXPROCS=8')")
	flag.Parse()
	if err := run(strings.Split(*builtins, ","), *scale, *clients, *threads, *rounds, *duration, *transport); err != nil {
		fmt.Fprintln(os.Stderr, "vspgbench:", err)
		os.Exit(1)
	}
}

var (
	profile      *string
	hold         *time.Duration
	variantsFlag *string
)

// variant is one way of running sledge: environment and extra options.
type variant struct {
	name string
	env  []string
	args []string
}

func parseVariants(s string) []variant {
	var out []variant
	for _, v := range strings.Split(s, ";") {
		v = strings.TrimSpace(v)
		if v == "" {
			continue
		}
		x := variant{name: v}
		if v != "default" {
			for _, tok := range strings.Fields(v) {
				if !strings.HasPrefix(tok, "-") && strings.Contains(tok, "=") {
					x.env = append(x.env, tok)
				} else {
					x.args = append(x.args, tok)
				}
			}
		}
		out = append(out, x)
	}
	return out
}

// sample is one run of one tool.
type sample struct {
	tps   float64
	txns  int64
	cpuUs float64 // client CPU per transaction, µs
}

func run(builtins []string, scale, clients, threads, rounds, seconds int, transport string) error {
	ctx := context.Background()
	pgbench, err := exec.LookPath("pgbench")
	if err != nil {
		return fmt.Errorf("pgbench not found: install postgresql-contrib (scripts/install-servers.sh)")
	}
	dir, err := os.MkdirTemp("", "sledge-vspgbench-")
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
		return fmt.Errorf("start postgres: %w", err)
	}
	defer srv.Stop()

	const dbname = "vspgbench"
	host := srv.Host
	url := fmt.Sprintf("postgres://%s:%s@%s:%d/%s", srv.User, srv.Password, srv.Host, srv.Port, dbname)
	if transport == "unix" {
		host = srv.Socket
		url = fmt.Sprintf("postgres://%s:%s@/%s?host=%s&port=%d", srv.User, srv.Password, dbname, srv.Socket, srv.Port)
	}
	start := time.Now()
	if out, err := exec.Command(bin, "build", "tpcb", "--db", url, "--scale", strconv.Itoa(scale), "--no-job").CombinedOutput(); err != nil {
		return fmt.Errorf("sledge build tpcb: %v\n%s", err, out)
	}
	fmt.Printf("built tpcb scale %d with sledge in %.1f s\n", scale, time.Since(start).Seconds())
	if *hold > 0 {
		fmt.Printf("holding for %s: %s\nPGPASSWORD=%s pgbench -h %s -p %d -U %s %s\n", *hold, url, srv.Password, host, srv.Port, srv.User, dbname)
		// Ctrl-C or SIGTERM ends the hold early and still stops the server.
		sig, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
		defer stop()
		select {
		case <-time.After(*hold):
		case <-sig.Done():
		}
		return nil
	}
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	settings := map[string]string{}
	for _, k := range []string{"server_version", "synchronous_commit", "fsync", "shared_buffers", "max_connections"} {
		var v string
		if err := conn.QueryRow(ctx, "SELECT current_setting($1)", k).Scan(&v); err == nil {
			settings[k] = v
		}
	}
	// The same state before every run, for both tools: pgbench's own
	// preparation (vacuum the small tables, empty the history), done here
	// so that pgbench runs with -n and neither tool does it itself.
	reset := func() error {
		for _, q := range []string{"VACUUM pgbench_branches", "VACUUM pgbench_tellers", "TRUNCATE pgbench_history"} {
			if _, err := conn.Exec(ctx, q); err != nil {
				return fmt.Errorf("%s: %w", q, err)
			}
		}
		return nil
	}
	env := append(os.Environ(), "PGPASSWORD="+srv.Password)
	tpsRe := regexp.MustCompile(`(?m)^tps = ([0-9.]+)`)
	txRe := regexp.MustCompile(`(?m)^number of transactions actually processed: (\d+)`)

	runPgbench := func(b string) (sample, error) {
		cmd := exec.Command(pgbench, "-n", "-M", "prepared", "-b", b, "-c", strconv.Itoa(clients), "-j", strconv.Itoa(threads),
			"-T", strconv.Itoa(seconds), "-h", host, "-p", strconv.Itoa(srv.Port), "-U", srv.User, dbname)
		cmd.Env = env
		var out, errOut bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errOut
		if err := cmd.Run(); err != nil {
			return sample{}, fmt.Errorf("pgbench: %v: %s", err, errOut.String())
		}
		m1, m2 := tpsRe.FindStringSubmatch(out.String()), txRe.FindStringSubmatch(out.String())
		if m1 == nil || m2 == nil {
			return sample{}, fmt.Errorf("pgbench output not understood: %s", out.String())
		}
		s := sample{}
		s.tps, _ = strconv.ParseFloat(m1[1], 64)
		s.txns, _ = strconv.ParseInt(m2[1], 10, 64)
		s.cpuUs = child.CPUUs(cmd.ProcessState) / float64(s.txns)
		return s, nil
	}
	runSledge := func(b string, v variant, round int) (sample, error) {
		cmd := exec.Command(bin, "run", "tpcb", "--db", url, "--builtin", b, "--mode", "prepared",
			"-c", strconv.Itoa(clients), "-T", strconv.Itoa(seconds), "--json", "--no-job")
		cmd.Args = append(cmd.Args, v.args...)
		cmd.Env = append(os.Environ(), v.env...)
		if *profile != "" {
			cmd.Args = append(cmd.Args, "--cpuprofile", fmt.Sprintf("%s.%s.%s.%d", *profile, b, strings.Join(strings.Fields(v.name), "_"), round))
		}
		var out, errOut bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errOut
		if err := cmd.Run(); err != nil {
			return sample{}, fmt.Errorf("sledge %s: %v: %s", v.name, err, errOut.String())
		}
		var r struct {
			TPS          float64 `json:"tps"`
			Transactions int64   `json:"transactions"`
			Failed       int64   `json:"failed"`
		}
		if err := json.Unmarshal(out.Bytes(), &r); err != nil {
			return sample{}, fmt.Errorf("sledge output not understood: %v", err)
		}
		s := sample{tps: r.TPS, txns: r.Transactions}
		s.cpuUs = child.CPUUs(cmd.ProcessState) / float64(s.txns)
		return s, nil
	}

	variants := parseVariants(*variantsFlag)
	fmt.Printf("PostgreSQL %s over %s; settings %v\n", settings["server_version"], transport, settings)
	fmt.Printf("pgbench -n -M prepared -c %d -j %d -T %d  vs  sledge run tpcb --mode prepared -c %d -T %d; %d rounds each, alternating\n",
		clients, threads, seconds, clients, seconds, rounds)
	fmt.Printf("sledge variants: %d\n\n", len(variants))
	fmt.Println("| builtin | round | tool | tps | CPU µs/txn |")
	fmt.Println("|---|---|---|---|---|")
	// Tool 0 is pgbench, tool i > 0 sledge's variant i−1.
	names := []string{"pgbench"}
	for _, v := range variants {
		names = append(names, "sledge "+v.name)
	}
	results := map[string][][]sample{}
	for _, b := range builtins {
		res := make([][]sample, len(names))
		results[b] = res
		for r := 1; r <= rounds; r++ {
			// Alternate the order: rotate by round and reverse every other
			// round, so no tool always gets the warmer cache or runs last.
			order := make([]int, len(names))
			for i := range order {
				order[i] = (i + r - 1) % len(names)
			}
			if r%2 == 0 {
				for i, j := 0, len(order)-1; i < j; i, j = i+1, j-1 {
					order[i], order[j] = order[j], order[i]
				}
			}
			for _, t := range order {
				if err := reset(); err != nil {
					return err
				}
				var smp sample
				var err error
				if t == 0 {
					smp, err = runPgbench(b)
				} else {
					smp, err = runSledge(b, variants[t-1], r)
				}
				if err != nil {
					return err
				}
				res[t] = append(res[t], smp)
				fmt.Printf("| %s | %d | %s | %.0f | %.1f |\n", b, r, names[t], smp.tps, smp.cpuUs)
			}
		}
	}
	fmt.Println("\n| builtin | tool | median tps | tps ratio to pgbench (target ≥ 1.0) | median CPU µs/txn | CPU ratio to pgbench (target ≤ 1.0) |")
	fmt.Println("|---|---|---|---|---|---|")
	for _, b := range builtins {
		res := results[b]
		tps := func(s sample) float64 { return s.tps }
		cpu := func(s sample) float64 { return s.cpuUs }
		pgT, pgC := child.Median(res[0], tps), child.Median(res[0], cpu)
		for t := range names {
			T, C := child.Median(res[t], tps), child.Median(res[t], cpu)
			fmt.Printf("| %s | %s | %.0f | %.2f | %.1f | %.2f |\n", b, names[t], T, T/pgT, C, C/pgC)
		}
	}
	return nil
}
