// Command vspgbench measures sledge's tpcb workload against pgbench itself
// (make bench-pgbench), side by side on one private PostgreSQL server: the
// builtin tpcb-like and select-only, pgbench -M prepared -c 4 -j 2 against
// sledge --mode prepared -c 4 and (with -sledge-pgbench) against `sledge
// pgbench` given pgbench's own command line, same duration, alternating,
// several rounds each, over each transport and each level of other load
// asked for. It reports each tool's tps and client CPU per transaction (user
// + system time of the whole process, from its rusage as the kernel reports
// it to the parent) and their ratios to pgbench's, medians of the rounds.
//
// -load N starts N busy-loop processes (this program re-run as a spinner,
// one core's worth each) before the rounds of that level and stops them
// after: the same other load for every tool. Load goes only to 127.0.0.1 or
// the server's unix socket in its temp directory.
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
	"regexp"
	"runtime"
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
	transport := flag.String("transport", "tcp", "transports, in this order: tcp, unix or both (tcp,unix)")
	loads := flag.String("load", "0", "levels of other load, in this order: N busy-loop processes (one core's worth each) running during every run of that level, e.g. 0,1")
	flag.BoolVar(&sledgePgbench, "sledge-pgbench", false, "also run `sledge pgbench` with pgbench's own command line (-n -M prepared -b B -c C -j J -T T)")
	spin := flag.Bool("spin", false, "internal: be one busy-loop process of -load")
	hold = flag.Duration("hold", 0, "after the build, print the URL and keep the server up this long instead of measuring (for profiling by hand)")
	profile = flag.String("cpuprofile", "", "write sledge's CPU profile of each run to this file prefix")
	variantsFlag = flag.String("variants", "default", "sledge variants to measure, separated by ';': each is a list of NAME=VALUE environment settings and extra sledge options, ?NAME=VALUE URL options, or 'default' (e.g. 'default;--no-cost;GOMAXPROCS=8;?io=loop')")
	flag.Parse()
	if *spin {
		spinForever()
	}
	levels, err := parseLoads(*loads)
	if err != nil {
		fmt.Fprintln(os.Stderr, "vspgbench: -load:", err)
		os.Exit(2)
	}
	transports := strings.Split(*transport, ",")
	for _, t := range transports {
		if t != "tcp" && t != "unix" {
			fmt.Fprintf(os.Stderr, "vspgbench: -transport: %q is neither tcp nor unix\n", t)
			os.Exit(2)
		}
	}
	if err := run(strings.Split(*builtins, ","), *scale, *clients, *threads, *rounds, *duration, transports, levels); err != nil {
		fmt.Fprintln(os.Stderr, "vspgbench:", err)
		os.Exit(1)
	}
}

var (
	profile       *string
	hold          *time.Duration
	variantsFlag  *string
	sledgePgbench bool
)

func parseLoads(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 0 {
			return nil, fmt.Errorf("%q is not a number of busy-loop processes (0, 1, 2, …)", f)
		}
		out = append(out, n)
	}
	return out, nil
}

// spinForever is one busy-loop process of -load: one thread, always
// runnable, until it is killed (or its parent dies: Pdeathsig).
func spinForever() {
	runtime.GOMAXPROCS(1)
	x := uint64(1)
	for {
		x = x*6364136223846793005 + 1442695040888963407
		if x == 0 {
			fmt.Println(x) // never; keeps the loop from being optimised away
		}
	}
}

// startLoad starts n spinners (this executable with -spin), killed by
// the returned stop, and by the kernel if this process dies first.
func startLoad(n int) (stop func(), err error) {
	self, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("start load: %w", err)
	}
	var cmds []*exec.Cmd
	stop = func() {
		for _, c := range cmds {
			_ = c.Process.Kill()
			_ = c.Wait()
		}
	}
	for i := 0; i < n; i++ {
		c := exec.Command(self, "-spin")
		c.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		if err := c.Start(); err != nil {
			stop()
			return nil, fmt.Errorf("start load: %w", err)
		}
		cmds = append(cmds, c)
	}
	return stop, nil
}

// loadAvg is the 1-minute load average (/proc/loadavg), to say how busy
// the machine was.
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return "?"
	}
	return f[0]
}

// variant is one way of running sledge: environment and extra options.
type variant struct {
	name  string
	env   []string
	args  []string
	query []string // URL options, from tokens such as ?io=loop
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
				if strings.HasPrefix(tok, "?") {
					x.query = append(x.query, tok[1:])
				} else if !strings.HasPrefix(tok, "-") && strings.Contains(tok, "=") {
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
	csTx  float64 // the client's context switches per transaction (voluntary and not)
}

// switches is the context switches of a finished process, all its threads.
func switches(ps *os.ProcessState) float64 {
	ru, ok := ps.SysUsage().(*syscall.Rusage)
	if !ok {
		return 0
	}
	return float64(ru.Nvcsw + ru.Nivcsw)
}

func run(builtins []string, scale, clients, threads, rounds, seconds int, transports []string, loads []int) error {
	// Ctrl-C or SIGTERM ends the running tool and still stops the server
	// and the spinners.
	ctx, stopSig := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stopSig()
	pgbench, err := child.Pgbench()
	if err != nil {
		return err
	}
	bin, dir, err := child.TempSledge("sledge-vspgbench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	srv, err := testdb.StartPostgres(context.Background())
	if err != nil {
		return fmt.Errorf("start postgres: %w", err)
	}
	defer srv.Stop()

	const dbname = "vspgbench"
	hostOf := func(transport string) (host, url string) {
		if transport == "unix" {
			return srv.Socket, fmt.Sprintf("postgres://%s:%s@/%s?host=%s&port=%d", srv.User, srv.Password, dbname, srv.Socket, srv.Port)
		}
		return srv.Host, fmt.Sprintf("postgres://%s:%s@%s:%d/%s", srv.User, srv.Password, srv.Host, srv.Port, dbname)
	}
	host, url := hostOf(transports[0])
	start := time.Now()
	if out, err := exec.Command(bin, "build", "tpcb", "--db", url, "--scale", strconv.Itoa(scale), "--no-job").CombinedOutput(); err != nil {
		return fmt.Errorf("sledge build tpcb: %v\n%s", err, out)
	}
	fmt.Printf("built tpcb scale %d with sledge in %.1f s\n", scale, time.Since(start).Seconds())
	if *hold > 0 {
		fmt.Printf("holding for %s: %s\nPGPASSWORD=%s pgbench -h %s -p %d -U %s %s\n", *hold, url, srv.Password, host, srv.Port, srv.User, dbname)
		select {
		case <-time.After(*hold):
		case <-ctx.Done():
		}
		return nil
	}
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
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

	// pgbenchLine runs pgbench's command line with the given program:
	// pgbench itself, or sledge's `pgbench` subcommand (same report).
	pgbenchLine := func(name string, prog []string, b, transport string) (sample, error) {
		h, _ := hostOf(transport)
		args := append(prog[1:len(prog):len(prog)], "-n", "-M", "prepared", "-b", b, "-c", strconv.Itoa(clients), "-j", strconv.Itoa(threads),
			"-T", strconv.Itoa(seconds), "-h", h, "-p", strconv.Itoa(srv.Port), "-U", srv.User, dbname)
		cmd := exec.CommandContext(ctx, prog[0], args...)
		cmd.Env = env
		var out, errOut bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errOut
		if err := cmd.Run(); err != nil {
			return sample{}, fmt.Errorf("%s: %v: %s", name, err, errOut.String())
		}
		m1, m2 := tpsRe.FindStringSubmatch(out.String()), txRe.FindStringSubmatch(out.String())
		if m1 == nil || m2 == nil {
			return sample{}, fmt.Errorf("%s output not understood: %s", name, out.String())
		}
		s := sample{}
		s.tps, _ = strconv.ParseFloat(m1[1], 64)
		s.txns, _ = strconv.ParseInt(m2[1], 10, 64)
		if s.txns > 0 {
			s.cpuUs = child.CPUUs(cmd.ProcessState) / float64(s.txns)
			s.csTx = switches(cmd.ProcessState) / float64(s.txns)
		}
		return s, nil
	}
	runSledge := func(b string, v variant, round int, transport string) (sample, error) {
		_, u := hostOf(transport)
		for _, q := range v.query {
			if strings.Contains(u, "?") {
				u += "&" + q
			} else {
				u += "?" + q
			}
		}
		cmd := exec.CommandContext(ctx, bin, "run", "tpcb", "--db", u, "--builtin", b, "--mode", "prepared",
			"-c", strconv.Itoa(clients), "-T", strconv.Itoa(seconds), "--json", "--no-job")
		cmd.Args = append(cmd.Args, v.args...)
		cmd.Env = append(os.Environ(), v.env...)
		if *profile != "" {
			cmd.Args = append(cmd.Args, "--cpuprofile", fmt.Sprintf("%s.%s.%s.%s.%d", *profile, transport, b, strings.Join(strings.Fields(v.name), "_"), round))
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
		if s.txns > 0 {
			s.cpuUs = child.CPUUs(cmd.ProcessState) / float64(s.txns)
			s.csTx = switches(cmd.ProcessState) / float64(s.txns)
		}
		return s, nil
	}

	// The tools: 0 is pgbench, then sledge's variants of `sledge run
	// tpcb`, then (with -sledge-pgbench) `sledge pgbench`.
	variants := parseVariants(*variantsFlag)
	type tool struct {
		name string
		run  func(b string, round int, transport string) (sample, error)
	}
	tools := []tool{{"pgbench", func(b string, _ int, t string) (sample, error) {
		return pgbenchLine("pgbench", []string{pgbench}, b, t)
	}}}
	for _, v := range variants {
		v := v
		tools = append(tools, tool{"sledge run " + v.name, func(b string, r int, t string) (sample, error) { return runSledge(b, v, r, t) }})
	}
	if sledgePgbench {
		tools = append(tools, tool{"sledge pgbench", func(b string, _ int, t string) (sample, error) {
			return pgbenchLine("sledge pgbench", []string{bin, "pgbench"}, b, t)
		}})
	}

	fmt.Printf("PostgreSQL %s; settings %v; %d CPUs\n", settings["server_version"], settings, runtime.NumCPU())
	fmt.Printf("pgbench -n -M prepared -c %d -j %d -T %d  vs  sledge run tpcb --mode prepared -c %d -T %d", clients, threads, seconds, clients, seconds)
	if sledgePgbench {
		fmt.Printf("  vs  sledge pgbench -n -M prepared -c %d -j %d -T %d", clients, threads, seconds)
	}
	fmt.Printf("; %d rounds each, alternating\n", rounds)
	fmt.Printf("transports %s; other load (busy-loop processes) %v; sledge variants: %d\n\n", strings.Join(transports, ","), loads, len(variants))
	fmt.Println("| transport | load | builtin | round | tool | tps | CPU µs/txn | switches/txn | load avg |")
	fmt.Println("|---|---|---|---|---|---|---|---|---|")
	type key struct {
		transport string
		load      int
		builtin   string
	}
	results := map[key][][]sample{}
	for _, transport := range transports {
		for _, load := range loads {
			stopLoad, err := startLoad(load)
			if err != nil {
				return err
			}
			err = func() error {
				defer stopLoad()
				for _, b := range builtins {
					res := make([][]sample, len(tools))
					results[key{transport, load, b}] = res
					for r := 1; r <= rounds; r++ {
						order := child.RoundOrder(len(tools), r)
						for _, t := range order {
							if err := reset(); err != nil {
								return err
							}
							smp, err := tools[t].run(b, r, transport)
							if err != nil {
								return err
							}
							res[t] = append(res[t], smp)
							fmt.Printf("| %s | %d | %s | %d | %s | %.0f | %.1f | %.2f | %s |\n", transport, load, b, r, tools[t].name, smp.tps, smp.cpuUs, smp.csTx, loadAvg())
						}
					}
				}
				return nil
			}()
			if err != nil {
				return err
			}
		}
	}
	fmt.Println("\n| transport | load | builtin | tool | median tps | tps ratio to pgbench (goal ≥ 1.0) | median CPU µs/txn | CPU ratio to pgbench (goal ≤ 1.0) | median switches/txn |")
	fmt.Println("|---|---|---|---|---|---|---|---|---|")
	tps := func(s sample) float64 { return s.tps }
	cpu := func(s sample) float64 { return s.cpuUs }
	cs := func(s sample) float64 { return s.csTx }
	for _, transport := range transports {
		for _, load := range loads {
			for _, b := range builtins {
				res := results[key{transport, load, b}]
				pgT, pgC := child.Median(res[0], tps), child.Median(res[0], cpu)
				for t := range tools {
					T, C := child.Median(res[t], tps), child.Median(res[t], cpu)
					fmt.Printf("| %s | %d | %s | %s | %.0f | %.2f | %.1f | %.2f | %.2f |\n", transport, load, b, tools[t].name, T, T/pgT, C, C/pgC, child.Median(res[t], cs))
				}
			}
		}
	}
	return nil
}
