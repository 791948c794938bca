// Command vsgotpc measures sledge's TPC-C modes against go-tpc (make
// bench-gotpc), side by side on the same private PostgreSQL and MariaDB
// servers: the same warehouses and threads, the same duration, alternating
// the order every round. Both tools' NOPM comes from the database itself
// (Σ d_next_o_id before and after each run, in each tool's own database),
// so the two figures have one definition: committed New-Orders per minute.
// go-tpc's own tpmC counts the 1% rolled-back New-Orders too and is only
// printed next to it. Client CPU per New-Order is each process's user +
// system time as the kernel reports it to the parent. Load goes only to
// 127.0.0.1.
//
// go-tpc is built from its source with the Go toolchain (go install of a
// tagged release from the module proxy) unless -gotpc names a binary.
package main

import (
	"bytes"
	"context"
	"database/sql"
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

	_ "github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5"

	"github.com/sledge-bench/sledge/internal/benchtool/child"
	"github.com/sledge-bench/sledge/internal/testdb"
)

// gotpcVersion is the go-tpc release built when -gotpc is not given: the
// newest tag the module proxy serves.
const gotpcVersion = "v1.0.9"

func main() {
	dbs := flag.String("dbs", "postgres,mariadb", "databases to measure on")
	warehouses := flag.Int("warehouses", 4, "warehouses (both tools)")
	threads := flag.Int("threads", 4, "go-tpc threads = sledge virtual users")
	rounds := flag.Int("rounds", 3, "rounds; every tool runs once per round, in alternating order")
	duration := flag.Duration("T", 60*time.Second, "duration of each run")
	modes := flag.String("modes", "prepared,batched,pipeline,procedure,block", "sledge modes to run")
	flag.BoolVar(&pgss, "pgss", false, "load pg_stat_statements (with track_planning) into PostgreSQL, so that sledge reports statements and plans per transaction there too")
	gotpc := flag.String("gotpc", "", "go-tpc binary (default: go install github.com/pingcap/go-tpc/cmd/go-tpc@"+gotpcVersion+")")
	flag.Parse()
	if err := run(*dbs, *warehouses, *threads, *rounds, *duration, strings.Split(*modes, ","), *gotpc); err != nil {
		fmt.Fprintln(os.Stderr, "vsgotpc:", err)
		os.Exit(1)
	}
}

// pgss: run PostgreSQL with pg_stat_statements (-pgss).
var pgss bool

// sample is one run of one tool.
type sample struct {
	nopm  float64 // from the database
	own   float64 // the tool's own figure (go-tpc tpmC, sledge nopm)
	cpuUs float64 // client CPU per committed New-Order, µs
	srvUs float64 // the server's CPU per committed New-Order, µs (/proc)
	// sledge's own figures per transaction (0 for go-tpc): round trips,
	// client CPU, server CPU.
	rt, txCPU, txSrv float64
	// sledge's samples of where the server's sessions were: shares of
	// samples on CPU, waiting for the client, on a lock.
	wCPU, wClient, wLock float64
	stmts                float64 // statements per transaction, the database's count; -1: not counted
}

func run(dbs string, warehouses, threads, rounds int, d time.Duration, modes []string, gotpc string) error {
	// Ctrl-C or SIGTERM ends the running tool and still stops the servers.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	dir, err := os.MkdirTemp("", "sledge-vsgotpc-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	root := child.ModuleRoot()
	bin := filepath.Join(dir, "sledge")
	build := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/sledge")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		return fmt.Errorf("go build: %v\n%s", err, out)
	}
	if gotpc == "" {
		inst := exec.CommandContext(ctx, "go", "install", "github.com/pingcap/go-tpc/cmd/go-tpc@"+gotpcVersion)
		inst.Env = append(os.Environ(), "GOBIN="+dir, "GOFLAGS=-buildvcs=false")
		inst.Dir = dir
		if out, err := inst.CombinedOutput(); err != nil {
			return fmt.Errorf("build go-tpc %s: %v\n%s", gotpcVersion, err, out)
		}
		gotpc = filepath.Join(dir, "go-tpc")
		fmt.Printf("go-tpc %s built from source with %s\n", gotpcVersion, goVersion())
	}
	for _, kind := range strings.Split(dbs, ",") {
		if err := onServer(ctx, kind, bin, gotpc, warehouses, threads, rounds, d, modes); err != nil {
			return fmt.Errorf("%s: %w", kind, err)
		}
	}
	return nil
}

func goVersion() string {
	out, err := exec.Command("go", "env", "GOVERSION").Output()
	if err != nil {
		return "go"
	}
	return strings.TrimSpace(string(out))
}

// target is one server: how each tool reaches a database on it, and how
// to read a database's new-order counter.
type target struct {
	srv      *testdb.Server
	kind     string
	sledgeDB string // sledge's URL
	gotpc    []string
	counter  func(db string) (int64, error)
	close    func()
}

func newTarget(ctx context.Context, kind string) (*target, error) {
	t := &target{kind: kind}
	var err error
	switch kind {
	case "postgres":
		var settings []string
		if pgss {
			settings = []string{"shared_preload_libraries=pg_stat_statements", "pg_stat_statements.track_planning=on"}
		}
		t.srv, err = testdb.StartPostgresWith(ctx, settings...)
	case "mariadb":
		t.srv, err = testdb.StartMariaDB(ctx)
	default:
		return nil, fmt.Errorf("unknown database %q: use postgres or mariadb", kind)
	}
	if err != nil {
		return nil, fmt.Errorf("start %s: %w", kind, err)
	}
	s := t.srv
	port := strconv.Itoa(s.Port)
	switch kind {
	case "postgres":
		t.sledgeDB = fmt.Sprintf("postgres://%s:%s@%s:%d/sledge", s.User, s.Password, s.Host, s.Port)
		t.gotpc = []string{"-d", "postgres", "-H", s.Host, "-P", port, "-U", s.User, "-p", s.Password, "-D", "gotpc", "--conn-params", "sslmode=disable"}
		t.counter = func(db string) (int64, error) {
			c, err := pgx.Connect(ctx, fmt.Sprintf("postgres://%s:%s@%s:%d/%s", s.User, s.Password, s.Host, s.Port, db))
			if err != nil {
				return 0, err
			}
			defer c.Close(ctx)
			var n int64
			return n, c.QueryRow(ctx, "SELECT sum(d_next_o_id) FROM district").Scan(&n)
		}
		// go-tpc does not create its database on PostgreSQL.
		c, err := pgx.Connect(ctx, fmt.Sprintf("postgres://%s:%s@%s:%d/postgres", s.User, s.Password, s.Host, s.Port))
		if err != nil {
			s.Stop()
			return nil, err
		}
		_, err = c.Exec(ctx, "CREATE DATABASE gotpc")
		c.Close(ctx)
		if err != nil {
			s.Stop()
			return nil, err
		}
	case "mariadb":
		t.sledgeDB = fmt.Sprintf("mysql://%s:%s@%s:%d/sledge", s.User, s.Password, s.Host, s.Port)
		t.gotpc = []string{"-d", "mysql", "-H", s.Host, "-P", port, "-U", s.User, "-p", s.Password, "-D", "gotpc"}
		t.counter = func(db string) (int64, error) {
			c, err := sql.Open("mysql", fmt.Sprintf("%s:%s@tcp(%s:%d)/%s", s.User, s.Password, s.Host, s.Port, db))
			if err != nil {
				return 0, err
			}
			defer c.Close()
			var n int64
			return n, c.QueryRowContext(ctx, "SELECT sum(d_next_o_id) FROM district").Scan(&n)
		}
	}
	t.close = func() { _ = s.Stop() }
	return t, nil
}

func onServer(ctx context.Context, kind, bin, gotpc string, warehouses, threads, rounds int, d time.Duration, modes []string) error {
	t, err := newTarget(ctx, kind)
	if err != nil {
		return err
	}
	defer t.close()
	fmt.Printf("\n## %s %s, %d warehouses, %d threads, %s per run, %d rounds\n\n", kind, t.srv.Version, warehouses, threads, d, rounds)
	start := time.Now()
	if out, err := exec.CommandContext(ctx, bin, "build", "tpcc", "--db", t.sledgeDB, "--warehouses", strconv.Itoa(warehouses), "--no-job").CombinedOutput(); err != nil {
		return fmt.Errorf("sledge build: %v\n%s", err, child.RedactArgs([]string{string(out)}, t.srv.Password)[0])
	}
	fmt.Printf("sledge build: %.0f s\n", time.Since(start).Seconds())
	if pgss && kind == "postgres" {
		c, err := pgx.Connect(ctx, t.sledgeDB)
		if err != nil {
			return err
		}
		_, err = c.Exec(ctx, "CREATE EXTENSION IF NOT EXISTS pg_stat_statements")
		c.Close(ctx)
		if err != nil {
			return fmt.Errorf("create extension pg_stat_statements: %w", err)
		}
	}
	start = time.Now()
	// --no-check: go-tpc's consistency queries after the load take longer
	// than the load on MariaDB; sledge's build does not check either.
	prep := exec.CommandContext(ctx, gotpc, append([]string{"tpcc", "prepare", "--no-check", "--warehouses", strconv.Itoa(warehouses), "-T", strconv.Itoa(threads)}, t.gotpc...)...)
	if out, err := prep.CombinedOutput(); err != nil {
		return fmt.Errorf("go-tpc prepare: %v\n%s", err, child.RedactArgs([]string{lastLines(string(out), 10)}, t.srv.Password)[0])
	}
	fmt.Printf("go-tpc prepare: %.0f s\n\n", time.Since(start).Seconds())

	names := []string{"go-tpc"}
	for _, m := range modes {
		names = append(names, "sledge "+m)
	}
	tpmC := regexp.MustCompile(`tpmC: ([0-9.]+)`)
	runOne := func(i int) (sample, error) {
		db := "sledge"
		var cmd *exec.Cmd
		if i == 0 {
			db = "gotpc"
			cmd = exec.CommandContext(ctx, gotpc, append([]string{"tpcc", "run", "--warehouses", strconv.Itoa(warehouses), "-T", strconv.Itoa(threads),
				"--time", d.String(), "--interval", d.String()}, t.gotpc...)...)
		} else {
			cmd = exec.CommandContext(ctx, bin, "run", "tpcc", "--db", t.sledgeDB, "--mode", modes[i-1], "--vus", strconv.Itoa(threads),
				"--rampup", "0s", "--duration", d.String(), "--json", "--no-job")
		}
		before, err := t.counter(db)
		if err != nil {
			return sample{}, fmt.Errorf("read %s's new orders: %w", db, err)
		}
		srv0, err := serverCPU(t.srv)
		if err != nil {
			return sample{}, err
		}
		var out, errOut bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errOut
		if err := cmd.Run(); err != nil {
			return sample{}, fmt.Errorf("%s: %v: %s", names[i], err, child.RedactArgs([]string{lastLines(errOut.String()+out.String(), 5)}, t.srv.Password)[0])
		}
		srv1, err := serverCPU(t.srv)
		if err != nil {
			return sample{}, err
		}
		after, err := t.counter(db)
		if err != nil {
			return sample{}, fmt.Errorf("read %s's new orders: %w", db, err)
		}
		s := sample{nopm: float64(after-before) / d.Minutes()}
		if after > before {
			s.srvUs = (srv1 - srv0) / float64(after-before)
		}
		if i == 0 {
			if m := tpmC.FindStringSubmatch(out.String()); m != nil {
				s.own, _ = strconv.ParseFloat(m[1], 64)
			}
		} else {
			var r struct {
				NOPM   *float64 `json:"nopm"`
				PerTxn struct {
					RoundTrips float64  `json:"round_trips"`
					CPU        *float64 `json:"client_cpu_us"`
				} `json:"per_txn"`
				Server struct {
					User  *float64 `json:"cpu_user_us"`
					Sys   *float64 `json:"cpu_sys_us"`
					Stmts *float64 `json:"statements"`
				} `json:"server_per_txn"`
				Waits *struct {
					CPU    float64 `json:"cpu"`
					Client float64 `json:"client"`
					Lock   float64 `json:"lock"`
				} `json:"server_waits"`
			}
			if err := json.Unmarshal(out.Bytes(), &r); err == nil && r.NOPM != nil {
				s.own = *r.NOPM
				s.rt = r.PerTxn.RoundTrips
				if r.PerTxn.CPU != nil {
					s.txCPU = *r.PerTxn.CPU
				}
				if r.Server.User != nil && r.Server.Sys != nil {
					s.txSrv = *r.Server.User + *r.Server.Sys
				}
				s.stmts = -1
				if r.Server.Stmts != nil {
					s.stmts = *r.Server.Stmts
				}
				if r.Waits != nil {
					s.wCPU, s.wClient, s.wLock = r.Waits.CPU, r.Waits.Client, r.Waits.Lock
				}
			}
		}
		if after > before {
			s.cpuUs = child.CPUUs(cmd.ProcessState) / float64(after-before)
		}
		return s, nil
	}
	fmt.Println("| round | tool | NOPM (database) | tool's own figure | client CPU µs per New-Order | server CPU µs per New-Order |")
	fmt.Println("|---|---|---|---|---|---|")
	res := make([][]sample, len(names))
	for r := 1; r <= rounds; r++ {
		order := child.RoundOrder(len(names), r)
		for _, i := range order {
			s, err := runOne(i)
			if err != nil {
				return err
			}
			res[i] = append(res[i], s)
			fmt.Printf("| %d | %s | %.0f | %.0f | %.0f | %.0f |\n", r, names[i], s.nopm, s.own, s.cpuUs, s.srvUs)
		}
	}
	fmt.Println("\n| tool | median NOPM | ratio to go-tpc (goal ≥ 1.3 for the best client-side mode) | client CPU µs per New-Order | server CPU µs per New-Order |")
	fmt.Println("|---|---|---|---|---|")
	g := child.Median(res[0], func(s sample) float64 { return s.nopm })
	for i := range names {
		n := child.Median(res[i], func(s sample) float64 { return s.nopm })
		fmt.Printf("| %s | %.0f | %.2f | %.0f | %.0f |\n", names[i], n, n/g, child.Median(res[i], func(s sample) float64 { return s.cpuUs }),
			child.Median(res[i], func(s sample) float64 { return s.srvUs }))
	}
	fmt.Println("\nsledge's own figures per transaction of the mix (medians): round trips and client CPU measured by the client, server CPU from /proc")
	fmt.Println("and the database's own counts and samples (statements; share of session samples on CPU, waiting for the client, on a lock)")
	fmt.Println("\n| mode | round trips | client CPU µs | server CPU µs | statements | on CPU | client | lock |")
	fmt.Println("|---|---|---|---|---|---|---|---|")
	for i := 1; i < len(names); i++ {
		m := func(f func(s sample) float64) float64 { return child.Median(res[i], f) }
		stmts := "-"
		if v := m(func(s sample) float64 { return s.stmts }); v >= 0 {
			stmts = fmt.Sprintf("%.1f", v)
		}
		fmt.Printf("| %s | %.1f | %.0f | %.0f | %s | %.0f%% | %.0f%% | %.0f%% |\n", modes[i-1], m(func(s sample) float64 { return s.rt }),
			m(func(s sample) float64 { return s.txCPU }), m(func(s sample) float64 { return s.txSrv }), stmts,
			100*m(func(s sample) float64 { return s.wCPU }), 100*m(func(s sample) float64 { return s.wClient }), 100*m(func(s sample) float64 { return s.wLock }))
	}
	return nil
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// serverCPU is the CPU time in µs the server's processes have used: the
// main process, every child alive now, and the children it has reaped
// (cutime, cstime: a PostgreSQL backend that ended mid-run still counts).
func serverCPU(srv *testdb.Server) (float64, error) {
	pid, err := srv.PID()
	if err != nil {
		return 0, err
	}
	ticks := func(p int, children bool) (float64, int, error) {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p))
		if err != nil {
			return 0, 0, err
		}
		// Fields after the command name, which may hold spaces.
		f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+2:]))
		ppid, _ := strconv.Atoi(f[1])
		var sum float64
		for _, i := range []int{11, 12} { // utime, stime
			v, _ := strconv.ParseFloat(f[i], 64)
			sum += v
		}
		if children {
			for _, i := range []int{13, 14} { // cutime, cstime
				v, _ := strconv.ParseFloat(f[i], 64)
				sum += v
			}
		}
		return sum, ppid, nil
	}
	total, _, err := ticks(pid, true)
	if err != nil {
		return 0, fmt.Errorf("server CPU: %w", err)
	}
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		p, err := strconv.Atoi(e.Name())
		if err != nil || p == pid {
			continue
		}
		if t, ppid, err := ticks(p, false); err == nil && ppid == pid {
			total += t
		}
	}
	const hz = 100 // USER_HZ on Linux
	return total / hz * 1e6, nil
}
