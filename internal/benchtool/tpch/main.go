// Command tpch measures sledge's TPC-H-derived workload (make bench-tpch,
// make bench-tpch-build) on private throwaway servers and SQLite, and
// prints Markdown.
//
// Default: for each database of -dbs, `sledge build tpch --scale SF`
// (rows and the build's load, index and total seconds), `sledge check
// tpch` (must pass), then `sledge run tpch --params validation --streams
// S` (power and throughput tests; the 22 validation answers must match
// the references), and a summary table and a per-query table of the power
// test. Every time is sledge's client clock: from submitting a statement
// to receiving its last row.
//
// -peer: the build speed goal of issue 15 on one private PostgreSQL:
// sledge build tpch against the same rows loaded from pre-generated .tbl
// files with server-side COPY, in parallel sessions, then the same keys,
// indexes and ANALYZE; -rounds alternating rounds, medians and ratios.
//
// Load goes only to 127.0.0.1 and to SQLite files in a temp directory.
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"golang.org/x/sync/errgroup"

	"github.com/sledge-bench/sledge/internal/benchtool/child"
	"github.com/sledge-bench/sledge/internal/testdb"
	"github.com/sledge-bench/sledge/internal/workload/tpch"
)

func main() {
	dbs := flag.String("dbs", "sqlite,postgres,mariadb", "databases to measure: sqlite, postgres, mariadb")
	sf := flag.Float64("sf", 0.1, "scale factor")
	streams := flag.Int("streams", 2, "query streams of the throughput test")
	peer := flag.Bool("peer", false, "instead: sledge build tpch against COPY from pre-generated .tbl files on one private PostgreSQL (issue 15)")
	rounds := flag.Int("rounds", 3, "-peer: rounds, alternating which goes first")
	flag.StringVar(&cpuProfile, "cpuprofile", "", "-peer: write sledge build's CPU profile of round N to PREFIX.N")
	flag.BoolVar(&watch, "watch", false, "-peer: sample pg_stat_activity every 100 ms during each build and print how long 0, 1, 2, … COPY statements were active at once and which tables (a diagnosis: it adds a session)")
	flag.Parse()
	var err error
	if *peer {
		err = runPeer(*sf, *rounds)
	} else {
		err = runBench(strings.Split(*dbs, ","), *sf, *streams)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "tpch bench:", err)
		os.Exit(1)
	}
}

var (
	cpuProfile string
	watch      bool
)

// buildResult is `sledge build --json`.
type buildResult struct {
	Rows     int64   `json:"rows"`
	LoadS    float64 `json:"load_s"`
	IndexesS float64 `json:"indexes_s"`
	TotalS   float64 `json:"total_s"`
	BuildVUs int     `json:"build_vus"`
}

// runResult is the part of `sledge run tpch --json` reported here.
type runResult struct {
	Power        *float64 `json:"power"`
	Throughput   *float64 `json:"throughput"`
	QphH         *float64 `json:"qphh"`
	Ts           *float64 `json:"throughput_seconds"`
	Streams      int      `json:"streams"`
	Verified     *bool    `json:"verified"`
	VerifyNote   string   `json:"verify_note"`
	DatabaseInfo string   `json:"database_info"`
	TotalSeconds float64  `json:"total_seconds"`
	Queries      []struct {
		Stream  int     `json:"stream"`
		Query   int     `json:"query"`
		Seconds float64 `json:"seconds"`
		Rows    int64   `json:"rows"`
	} `json:"queries"`
	Refresh []struct {
		Stream   int     `json:"stream"`
		Function string  `json:"function"`
		Seconds  float64 `json:"seconds"`
	} `json:"refresh"`
	Error string `json:"error"`
}

// sledgeBin builds sledge into dir.
func sledgeBin(dir string) (string, error) {
	bin := filepath.Join(dir, "sledge")
	if err := child.BuildSledge(bin); err != nil {
		return "", err
	}
	return bin, nil
}

// sledge runs the binary with args and returns its standard output; the
// error carries its standard error.
func sledge(bin string, args ...string) ([]byte, error) {
	cmd := exec.Command(bin, append(args, "--no-job")...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	if err != nil {
		return out.Bytes(), fmt.Errorf("sledge %s: %v: %s", args[0], err, strings.TrimSpace(errOut.String()))
	}
	return out.Bytes(), nil
}

func startServer(ctx context.Context, kind string) (*testdb.Server, error) {
	switch kind {
	case "postgres":
		return testdb.StartPostgres(ctx)
	case "mariadb":
		return testdb.StartMariaDB(ctx)
	}
	return nil, fmt.Errorf("unknown server %q", kind)
}

func serverURL(srv *testdb.Server, db string) string {
	scheme := map[string]string{"postgres": "postgres", "mariadb": "mysql"}[srv.Kind]
	return fmt.Sprintf("%s://%s:%s@%s:%d/%s", scheme, srv.User, srv.Password, srv.Host, srv.Port, db)
}

// dbResult is one database's measurements.
type dbResult struct {
	kind    string
	build   buildResult
	checkOK bool
	run     runResult
}

func runBench(dbs []string, sf float64, streams int) error {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "sledge-tpchbench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	bin, err := sledgeBin(dir)
	if err != nil {
		return err
	}
	header(fmt.Sprintf("go run ./internal/benchtool/tpch -dbs %s -sf %g -streams %d", strings.Join(dbs, ","), sf, streams))
	var results []dbResult
	var failures []string
	for _, kind := range dbs {
		r, err := benchOne(ctx, bin, dir, kind, sf, streams)
		if err != nil {
			return fmt.Errorf("%s: %w", kind, err)
		}
		if !r.checkOK {
			failures = append(failures, kind+": sledge check tpch failed")
		}
		if r.run.Verified == nil || !*r.run.Verified {
			failures = append(failures, kind+": validation answers not verified: "+r.run.VerifyNote)
		}
		results = append(results, r)
		fmt.Fprintf(os.Stderr, "%s done\n", kind)
	}
	printBench(results, sf, streams)
	if len(failures) > 0 {
		return errors.New(strings.Join(failures, "; "))
	}
	return nil
}

func benchOne(ctx context.Context, bin, dir, kind string, sf float64, streams int) (dbResult, error) {
	r := dbResult{kind: kind}
	var url string
	if kind == "sqlite" {
		url = "sqlite://" + filepath.Join(dir, "tpch.db")
	} else {
		srv, err := startServer(ctx, kind)
		if err != nil {
			return r, fmt.Errorf("start: %w", err)
		}
		defer srv.Stop()
		url = serverURL(srv, "tpch")
	}
	sfs := strconv.FormatFloat(sf, 'f', -1, 64)
	fmt.Fprintf(os.Stderr, "%s: building SF %s\n", kind, sfs)
	out, err := sledge(bin, "build", "tpch", "--db", url, "--scale", sfs, "--json")
	if err != nil {
		return r, err
	}
	if err := json.Unmarshal(out, &r.build); err != nil {
		return r, fmt.Errorf("build output: %v: %s", err, out)
	}
	out, err = sledge(bin, "check", "tpch", "--db", url, "--json")
	var chk struct {
		OK bool `json:"ok"`
	}
	if jerr := json.Unmarshal(out, &chk); jerr != nil && err != nil {
		return r, err
	}
	r.checkOK = err == nil && chk.OK
	fmt.Fprintf(os.Stderr, "%s: check ok=%v; running\n", kind, r.checkOK)
	out, err = sledge(bin, "run", "tpch", "--db", url, "--params", "validation", "--streams", strconv.Itoa(streams), "--json")
	if jerr := json.Unmarshal(out, &r.run); jerr != nil {
		if err != nil {
			return r, err
		}
		return r, fmt.Errorf("run output: %v: %s", jerr, out)
	}
	if err != nil {
		return r, fmt.Errorf("%v (%s)", err, r.run.Error)
	}
	return r, nil
}

// header prints the command, date, machine and toolchain.
func header(cmdline string) {
	fmt.Printf("Command: `%s` (from the repository root)\n\n", cmdline)
	commit, _ := exec.Command("git", "-C", child.ModuleRoot(), "rev-parse", "--short", "HEAD").Output()
	dirty, _ := exec.Command("git", "-C", child.ModuleRoot(), "status", "--porcelain", "--untracked-files=no").Output()
	d := ""
	if len(bytes.TrimSpace(dirty)) > 0 {
		d = " (with uncommitted changes)"
	}
	fmt.Printf("- date: %s\n", time.Now().UTC().Format("2006-01-02 15:04 MST"))
	fmt.Printf("- machine: %d CPUs (%s), %s; shared and noisy\n", runtime.NumCPU(), cpuModel(), memTotal())
	fmt.Printf("- sledge %s%s, %s\n\n", strings.TrimSpace(string(commit)), d, runtime.Version())
}

func cpuModel() string {
	b, _ := os.ReadFile("/proc/cpuinfo")
	for _, l := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "unknown CPU"
}

func memTotal() string {
	b, _ := os.ReadFile("/proc/meminfo")
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "MemTotal:" {
			kb, _ := strconv.ParseFloat(f[1], 64)
			return fmt.Sprintf("%.0f GB RAM", kb/1024/1024)
		}
	}
	return "unknown RAM"
}

func f(p *float64, format string) string {
	if p == nil {
		return "—"
	}
	return fmt.Sprintf(format, *p)
}

func printBench(rs []dbResult, sf float64, streams int) {
	fmt.Printf("Every figure is sledge's client clock (monotonic, in the sledge process): a query's seconds run from submitting its text to receiving its last row; a refresh function's cover all its transactions; the build's from the first DROP to the last statement. `sledge build tpch --scale %g --json`, `sledge check tpch` (passed where it says so), then `sledge run tpch --params validation --streams %d --json`: the validation pass (the 22 answers against the references), the power test, then the throughput test (%d query streams and the refresh stream). TPC-H-derived figures, not TPC-H results.\n\n", sf, streams, streams)
	fmt.Println("| database | version | rows | load s | indexes + ANALYZE s | build total s | check | Power@SF | Throughput@SF | QphH@SF | Ts s | verified |")
	fmt.Println("|---|---|---|---|---|---|---|---|---|---|---|---|")
	for _, r := range rs {
		ver := "—"
		if r.run.Verified != nil {
			ver = strconv.FormatBool(*r.run.Verified)
		}
		chk := "fail"
		if r.checkOK {
			chk = "pass"
		}
		fmt.Printf("| %s | %s | %d | %.1f | %.1f | %.1f | %s | %s | %s | %s | %s | %s |\n", r.kind, r.run.DatabaseInfo, r.build.Rows,
			r.build.LoadS, r.build.IndexesS, r.build.TotalS, chk, f(r.run.Power, "%.1f"), f(r.run.Throughput, "%.1f"), f(r.run.QphH, "%.1f"), f(r.run.Ts, "%.2f"), ver)
	}
	fmt.Printf("\nPower test (stream 0), seconds per query and refresh function (SF %g):\n\n", sf)
	fmt.Print("| query |")
	for _, r := range rs {
		fmt.Printf(" %s |", r.kind)
	}
	fmt.Print("\n|---|")
	for range rs {
		fmt.Print("---|")
	}
	fmt.Println()
	row := func(name string, get func(dbResult) (float64, bool)) {
		fmt.Printf("| %s |", name)
		for _, r := range rs {
			if v, ok := get(r); ok {
				fmt.Printf(" %.4f |", v)
			} else {
				fmt.Print(" — |")
			}
		}
		fmt.Println()
	}
	for q := 1; q <= 22; q++ {
		row(fmt.Sprintf("Q%d", q), func(r dbResult) (float64, bool) {
			for _, x := range r.run.Queries {
				if x.Stream == 0 && x.Query == q {
					return x.Seconds, true
				}
			}
			return 0, false
		})
	}
	for _, fn := range []string{"RF1", "RF2"} {
		row(fn, func(r dbResult) (float64, bool) {
			for _, x := range r.run.Refresh {
				if x.Stream == 0 && x.Function == fn {
					return x.Seconds, true
				}
			}
			return 0, false
		})
	}
	row("sum of the 24", func(r dbResult) (float64, bool) {
		s := 0.0
		for _, x := range r.run.Queries {
			if x.Stream == 0 {
				s += x.Seconds
			}
		}
		for _, x := range r.run.Refresh {
			if x.Stream == 0 {
				s += x.Seconds
			}
		}
		return s, true
	})
	row("throughput test Ts", func(r dbResult) (float64, bool) {
		if r.run.Ts == nil {
			return 0, false
		}
		return *r.run.Ts, true
	})
}

// ---- -peer: issue 15's build goal ----

// peerSample is one build of either side.
type peerSample struct {
	load, total, wall float64
	rows              int64
}

func runPeer(sf float64, rounds int) error {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "sledge-tpchpeer-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	// The server (user postgres) reads the .tbl files.
	if err := os.Chmod(dir, 0o755); err != nil {
		return err
	}
	bin, err := sledgeBin(dir)
	if err != nil {
		return err
	}
	vus := runtime.NumCPU() // sledge's --build-vus default
	sfs := strconv.FormatFloat(sf, 'f', -1, 64)
	prof := ""
	if cpuProfile != "" {
		prof = " -cpuprofile " + cpuProfile
	}
	if watch {
		prof += " -watch"
	}
	header(fmt.Sprintf("go run ./internal/benchtool/tpch -peer -sf %s -rounds %d%s", sfs, rounds, prof))

	// (a) Pre-generate the .tbl files (not timed) and split each into vus
	// contiguous parts, one per session, as sledge gives each build VU a
	// contiguous range of every table.
	tbl := filepath.Join(dir, "tbl")
	start := time.Now()
	gen := exec.Command("go", "run", "./internal/workload/tpch/answers/tbl", "-sf", sfs, "-out", tbl)
	gen.Dir = child.ModuleRoot()
	if out, err := gen.CombinedOutput(); err != nil {
		return fmt.Errorf("tbl: %v\n%s", err, out)
	}
	w, err := tpch.New(tpch.Config{SF: sf})
	if err != nil {
		return err
	}
	tables := w.Tables()
	meta := tables[len(tables)-1]
	tables = tables[:len(tables)-1]
	var fileRows int64
	var fileBytes int64
	for _, t := range tables {
		n, b, err := split(filepath.Join(tbl, t.Name+".tbl"), vus)
		if err != nil {
			return err
		}
		if n != t.Rows {
			return fmt.Errorf("%s.tbl has %d rows, want %d", t.Name, n, t.Rows)
		}
		fileRows += n
		fileBytes += b
	}
	fmt.Fprintf(os.Stderr, "generated and split %d rows (%.0f MB) in %.0f s\n", fileRows, float64(fileBytes)/1e6, time.Since(start).Seconds())

	srv, err := testdb.StartPostgres(ctx)
	if err != nil {
		return fmt.Errorf("start postgres: %w", err)
	}
	defer srv.Stop()
	const dbname = "tpchbuild"
	url := serverURL(srv, dbname)
	admin, err := pgx.Connect(ctx, serverURL(srv, "postgres"))
	if err != nil {
		return err
	}
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+dbname); err != nil {
		return err
	}
	admin.Close(ctx)
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	var version string
	_ = conn.QueryRow(ctx, "SELECT current_setting('server_version')").Scan(&version)
	settings := []string{}
	for _, k := range []string{"shared_buffers", "fsync", "synchronous_commit", "full_page_writes", "maintenance_work_mem", "max_wal_size"} {
		var v string
		if err := conn.QueryRow(ctx, "SELECT current_setting($1)", k).Scan(&v); err == nil {
			settings = append(settings, k+"="+v)
		}
	}
	drop := func() error {
		for _, q := range w.Script("postgres", "drop") {
			if _, err := conn.Exec(ctx, q); err != nil {
				return err
			}
		}
		_, err := conn.Exec(ctx, "CHECKPOINT")
		return err
	}

	runCopy := func(checkAfter bool) (peerSample, error) {
		if err := drop(); err != nil {
			return peerSample{}, err
		}
		// Sessions are connected before the clock starts, as sledge's
		// are before its build's clock.
		conns := make([]*pgx.Conn, vus)
		for i := range conns {
			c, err := pgx.Connect(ctx, url)
			if err != nil {
				return peerSample{}, err
			}
			defer c.Close(ctx)
			conns[i] = c
		}
		var s peerSample
		t0 := time.Now()
		for _, q := range append(w.Script("postgres", "drop"), w.Script("postgres", "tables")...) {
			if _, err := conns[0].Exec(ctx, q); err != nil {
				return s, fmt.Errorf("%s: %w", q, err)
			}
		}
		g, gctx := errgroup.WithContext(ctx)
		rows := make([]int64, vus)
		for k := range vus {
			g.Go(func() error {
				for _, t := range tables {
					path := fmt.Sprintf("%s.%d", filepath.Join(tbl, t.Name+".tbl"), k)
					tag, err := conns[k].Exec(gctx, fmt.Sprintf("COPY %s FROM '%s' WITH (FORMAT text, DELIMITER '|')", t.Name, path))
					if err != nil {
						return fmt.Errorf("COPY %s part %d: %w", t.Name, k, err)
					}
					rows[k] += tag.RowsAffected()
				}
				return nil
			})
		}
		if err := g.Wait(); err != nil {
			return s, err
		}
		t1 := time.Now()
		for _, q := range w.Script("postgres", "indexes") {
			if _, err := conns[0].Exec(ctx, q); err != nil {
				return s, fmt.Errorf("%s: %w", q, err)
			}
		}
		// The metadata table last, as sledge loads it.
		for _, r := range meta.Fill(0, nil) {
			if _, err := conns[0].Exec(ctx, "INSERT INTO tpch_meta (name, value) VALUES ($1, $2)", r[0], r[1]); err != nil {
				return s, err
			}
		}
		t2 := time.Now()
		s.rows = meta.Rows // counted as sledge counts them
		for _, n := range rows {
			s.rows += n
		}
		s.load, s.total, s.wall = t1.Sub(t0).Seconds(), t2.Sub(t0).Seconds(), t2.Sub(t0).Seconds()
		if checkAfter {
			if _, err := sledge(bin, "check", "tpch", "--db", url, "--json"); err != nil {
				return s, fmt.Errorf("the COPY load fails sledge check tpch: %w", err)
			}
		}
		return s, nil
	}
	runSledge := func(round int) (peerSample, error) {
		if err := drop(); err != nil {
			return peerSample{}, err
		}
		args := []string{"build", "tpch", "--db", url, "--scale", sfs, "--json"}
		if cpuProfile != "" {
			args = append(args, "--cpuprofile", fmt.Sprintf("%s.%d", cpuProfile, round))
		}
		t0 := time.Now()
		out, err := sledge(bin, args...)
		wall := time.Since(t0).Seconds()
		if err != nil {
			return peerSample{}, err
		}
		var b buildResult
		if err := json.Unmarshal(out, &b); err != nil {
			return peerSample{}, fmt.Errorf("build output: %v: %s", err, out)
		}
		if b.BuildVUs != vus {
			return peerSample{}, fmt.Errorf("sledge built with %d VUs, the peer loads with %d sessions", b.BuildVUs, vus)
		}
		return peerSample{load: b.LoadS, total: b.TotalS, wall: wall, rows: b.Rows}, nil
	}

	fmt.Printf("PostgreSQL %s (private server, %s), SF %s: %d rows in 8 tables (the rows columns below add tpch_meta's %d), %.0f MB of .tbl text; %d sessions (sledge's --build-vus default, the number of CPUs) on both sides.\n\n",
		version, strings.Join(settings, ", "), sfs, fileRows, meta.Rows, float64(fileBytes)/1e6, vus)
	fmt.Println("- peer: the .tbl files (written beforehand by `go run ./internal/workload/tpch/answers/tbl`, not timed), each split into one contiguous part per session; the clock starts with sledge's own DROP and CREATE TABLE statements; each session runs `COPY table FROM 'file.k' WITH (FORMAT text, DELIMITER '|')` for its part of every table in sledge's table order; then sledge's keys, indexes and ANALYZE (`Script(\"postgres\", \"indexes\")`, one session, in order) and the three tpch_meta rows. Its load (DROP + CREATE + COPY) and total are this program's clock in the same way.")
	fmt.Printf("- sledge: `sledge build tpch --scale %s --json` (load_s: DROP + CREATE + generating and loading the rows; total_s: also keys, indexes, ANALYZE, tpch_meta); wall = the whole process, start-up and connecting included.\n", sfs)
	fmt.Println("- Before each build: both sides' tables dropped and a CHECKPOINT (not timed). Rounds alternate the order: the peer first in odd rounds. The load average is the machine's (/proc/loadavg, 1 minute) before and after each build: the builds themselves bring it to about 2.")
	fmt.Println()
	fmt.Println("| round | side | rows | load s | total s | sledge wall s | load average before → after |")
	fmt.Println("|---|---|---|---|---|---|---|")
	var peers, sledges []peerSample
	var watched []string
	for r := 1; r <= rounds; r++ {
		order := []string{"peer", "sledge"}
		if r%2 == 0 {
			order = []string{"sledge", "peer"}
		}
		for _, side := range order {
			var s peerSample
			var err error
			la0 := loadAvg()
			var stopWatch func() string
			if watch {
				stopWatch = watchCopies(ctx, url)
			}
			if side == "peer" {
				s, err = runCopy(r == 1)
				peers = append(peers, s)
			} else {
				s, err = runSledge(r)
				sledges = append(sledges, s)
			}
			if stopWatch != nil {
				watched = append(watched, fmt.Sprintf("| %d | %s | %s", r, side, stopWatch()))
			}
			if err != nil {
				return fmt.Errorf("round %d %s: %w", r, side, err)
			}
			if s.rows != fileRows+meta.Rows {
				return fmt.Errorf("round %d %s: %d rows loaded, want %d", r, side, s.rows, fileRows+meta.Rows)
			}
			wall := "—"
			if side == "sledge" {
				wall = fmt.Sprintf("%.2f", s.wall)
			}
			fmt.Printf("| %d | %s | %d | %.2f | %.2f | %s | %s → %s |\n", r, side, s.rows, s.load, s.total, wall, la0, loadAvg())
			fmt.Fprintf(os.Stderr, "round %d %s: load %.1f s, total %.1f s (%s)\n", r, side, s.load, s.total, time.Now().UTC().Format("15:04:05"))
		}
	}
	if watch {
		fmt.Println("\nActive COPY statements in pg_stat_activity, sampled every 100 ms during each build (seconds = samples / 10; -watch):")
		fmt.Println()
		fmt.Println("| round | side | s with 0 COPY active | 1 | 2 | more | s with lineitem's COPY active | of which alone |")
		fmt.Println("|---|---|---|---|---|---|---|---|")
		for _, w := range watched {
			fmt.Println(w)
		}
	}
	load := func(s peerSample) float64 { return s.load }
	total := func(s peerSample) float64 { return s.total }
	pl, pt := child.Median(peers, load), child.Median(peers, total)
	sl, st := child.Median(sledges, load), child.Median(sledges, total)
	fmt.Printf("\nMedians of %d rounds (the middle value; of an even count, the upper one):\n\n", rounds)
	fmt.Println("| | peer (COPY from files) s | sledge build s | sledge / peer | goal |")
	fmt.Println("|---|---|---|---|---|")
	verdict := func(x float64) string {
		if x <= 1.5 {
			return "≤ 1.5: met"
		}
		return "≤ 1.5: missed"
	}
	fmt.Printf("| load | %.2f | %.2f | %.2f | %s |\n", pl, sl, sl/pl, verdict(sl/pl))
	fmt.Printf("| total (with keys, indexes, ANALYZE) | %.2f | %.2f | %.2f | %s |\n", pt, st, st/pt, verdict(st/pt))
	return nil
}

// loadAvg is the machine's 1-minute load average: on 2 CPUs, much above
// 2 during a build means someone else's work shares the machine.
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if f := strings.Fields(string(b)); err == nil && len(f) > 0 {
		return f[0]
	}
	return "?"
}

// split writes path's lines into parts contiguous files path.0 … and
// returns the lines and bytes.
func split(path string, parts int) (int64, int64, error) {
	var n int64
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, 0, err
	}
	n = int64(bytes.Count(b, []byte{'\n'}))
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	var line int64
	for k := range parts {
		// Part k has lines [n·k/parts, n·(k+1)/parts).
		hi := n * int64(k+1) / int64(parts)
		f, err := os.Create(fmt.Sprintf("%s.%d", path, k))
		if err != nil {
			return 0, 0, err
		}
		wr := bufio.NewWriterSize(f, 1<<20)
		for ; line < hi && sc.Scan(); line++ {
			wr.Write(sc.Bytes())
			wr.WriteByte('\n')
		}
		if err := wr.Flush(); err != nil {
			f.Close()
			return 0, 0, err
		}
		if err := f.Close(); err != nil {
			return 0, 0, err
		}
	}
	if err := sc.Err(); err != nil {
		return 0, 0, err
	}
	if err := os.Remove(path); err != nil {
		return 0, 0, err
	}
	return n, int64(len(b)), nil
}

// watchCopies samples the server's active COPY statements every 100 ms
// from a session of its own until the returned function is called, which
// returns the Markdown cells of what it saw: seconds with 0, 1, 2 and more
// COPYs active at once, seconds with lineitem's COPY active and of those
// the seconds it was the only one. Only from the first COPY seen to the
// last, so that DDL, indexes and ANALYZE are left out.
func watchCopies(ctx context.Context, url string) func() string {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan string)
	go func() {
		var samples [][]string // the tables being copied, per sample
		conn, err := pgx.Connect(ctx, url)
		if err != nil {
			done <- fmt.Sprintf("watch: %v | | | | | |", err)
			return
		}
		defer conn.Close(context.Background())
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for ctx.Err() == nil {
			var tables []string
			rows, err := conn.Query(ctx, "SELECT query FROM pg_stat_activity WHERE state = 'active' AND pid <> pg_backend_pid() AND query ILIKE 'COPY%'")
			if err == nil {
				for rows.Next() {
					var q string
					if rows.Scan(&q) == nil {
						f := strings.Fields(q)
						if len(f) > 1 {
							tables = append(tables, strings.Trim(f[1], `"`))
						}
					}
				}
				rows.Close()
			}
			samples = append(samples, tables)
			select {
			case <-ctx.Done():
			case <-tick.C:
			}
		}
		first, last := -1, -1
		for i, t := range samples {
			if len(t) > 0 {
				if first < 0 {
					first = i
				}
				last = i
			}
		}
		var n [4]int
		var li, liAlone int
		if first >= 0 {
			for _, t := range samples[first : last+1] {
				n[min(len(t), 3)]++
				for _, x := range t {
					if x == "lineitem" {
						li++
						if len(t) == 1 {
							liAlone++
						}
						break
					}
				}
			}
		}
		done <- fmt.Sprintf("%.1f | %.1f | %.1f | %.1f | %.1f | %.1f |", float64(n[0])/10, float64(n[1])/10, float64(n[2])/10, float64(n[3])/10, float64(li)/10, float64(liAlone)/10)
	}()
	return func() string {
		cancel()
		return <-done
	}
}
