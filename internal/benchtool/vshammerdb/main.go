// Command vshammerdb measures sledge's TPC-C client CPU per transaction
// against HammerDB's (make bench-hammerdb), side by side on one private
// MariaDB server (internal/testdb): HammerDB v4.12's own schema build and
// its MySQL TPROC-C timed driver, with stored procedures and without
// (its mysql_no_stored_procs option false and true), against sledge in
// every mode on sledge's own build of the same size; the same virtual
// users and measured time, alternating the order every round, medians of
// the rounds.
//
// HammerDB's client CPU is its process's user + system time (all its
// threads: the virtual users and the monitor) read from /proc at the two
// lines where it takes its start and end transaction counts, over the
// transactions it reports for that interval (its TPM × minutes: the
// server's Com_commit + Com_rollback). sledge's is its own per_txn
// client_cpu_us (getrusage of the whole process over its measured
// interval, docs/cost.md). Both are also given per New-Order (NOPM: Σ
// d_next_o_id, the same definition in both tools).
//
// HammerDB runs from its source (-hammerdb: a checkout, or a git
// directory whose tag v4.12 is extracted) on Debian's Tcl 8.6 with the
// packages tcl-thread, libsqlite3-tcl and mysqltcl. Its MariaDB driver
// needs HammerDB's own mariatcl library, which its source builds only
// with its bundled toolchain (Bawt), so the MySQL driver (mysqltcl, the
// same client library underneath) is used: its TPROC-C script is the one
// the MariaDB driver was forked from. ticklecharts (charts for its web
// service, not in Debian) is replaced by an empty package. Without
// HammerDB the tool says why and compares sledge with the figures
// recorded in docs/benchmarks.md instead. Load goes only to 127.0.0.1.
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/sledge-bench/sledge/internal/benchtool/child"
	"github.com/sledge-bench/sledge/internal/testdb"
)

// hammerdbTag is the HammerDB release measured.
const hammerdbTag = "v4.12"

// recorded are HammerDB v4.12's client CPU µs per transaction on MariaDB
// measured on this kind of machine (docs/benchmarks.md, issue 3's table:
// 168 with stored procedures, 673 without), used when HammerDB cannot run.
var recorded = map[string]float64{"storedprocs": 168, "nostoredprocs": 673}

func main() {
	src := flag.String("hammerdb", os.Getenv("HAMMERDB_SRC"), "HammerDB source: a checkout holding hammerdbcli, or a git directory with tag "+hammerdbTag+" (default $HAMMERDB_SRC)")
	warehouses := flag.Int("warehouses", 4, "warehouses (both tools' builds)")
	vus := flag.Int("vus", 4, "virtual users (both tools)")
	rounds := flag.Int("rounds", 3, "rounds; every tool runs once per round, alternating order")
	rampup := flag.Int("rampup", 0, "ramp-up minutes before the measured interval (whole minutes: HammerDB's CLI keeps its virtual users alive only for those)")
	duration := flag.Int("duration", 1, "measured minutes per run (whole minutes)")
	modes := flag.String("modes", "procedure,prepared,client,pipeline,batched", "sledge modes")
	hdbModes := flag.String("hammerdb-modes", "storedprocs,nostoredprocs", "HammerDB drivers: storedprocs (mysql_no_stored_procs false), nostoredprocs (true)")
	flag.Parse()
	if *duration <= 0 || *rampup < 0 {
		fmt.Fprintln(os.Stderr, "vshammerdb: -rampup and -duration are whole minutes, -duration at least 1")
		os.Exit(2)
	}
	var hm []string
	for _, m := range strings.Split(*hdbModes, ",") {
		if _, ok := recorded[m]; !ok {
			fmt.Fprintf(os.Stderr, "vshammerdb: -hammerdb-modes: %q is neither storedprocs nor nostoredprocs\n", m)
			os.Exit(2)
		}
		hm = append(hm, m)
	}
	o := opts{src: *src, warehouses: *warehouses, vus: *vus, rounds: *rounds, rampup: *rampup, duration: *duration,
		modes: strings.Split(*modes, ","), hdbModes: hm}
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "vshammerdb:", err)
		os.Exit(1)
	}
}

type opts struct {
	src                                       string
	warehouses, vus, rounds, rampup, duration int
	modes, hdbModes                           []string
}

// sample is one run of one tool.
type sample struct {
	nopm, tpm float64 // per minute of the measured interval (HammerDB: its own report; sledge: its JSON)
	txUs      float64 // client CPU µs per transaction
	noUs      float64 // client CPU µs per New-Order
}

func run(o opts) error {
	// Ctrl-C or SIGTERM ends the running tool and still stops the server.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	dir, err := os.MkdirTemp("", "sledge-vshammerdb-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	bin := filepath.Join(dir, "sledge")
	if err := child.BuildSledge(bin); err != nil {
		return err
	}
	hdb, why := prepareHammerDB(ctx, o.src, dir)
	if why != "" {
		fmt.Printf("HammerDB cannot run here: %s\nsledge is compared with HammerDB %s's figures recorded in docs/benchmarks.md (client CPU µs per transaction on MariaDB: %.0f with stored procedures, %.0f without).\n\n",
			why, hammerdbTag, recorded["storedprocs"], recorded["nostoredprocs"])
		o.hdbModes = nil
	}
	srv, err := testdb.StartMariaDB(ctx)
	if err != nil {
		return fmt.Errorf("start mariadb: %w", err)
	}
	defer srv.Stop()
	redact := func(s string) string { return strings.ReplaceAll(s, srv.Password, "REDACTED") }
	url := fmt.Sprintf("mysql://%s:%s@%s:%d/sledge", srv.User, srv.Password, srv.Host, srv.Port)
	fmt.Printf("MariaDB %s on 127.0.0.1 (TCP), %d warehouses, %d virtual users, %d min ramp-up, %d min measured, %d rounds\n",
		srv.Version, o.warehouses, o.vus, o.rampup, o.duration, o.rounds)
	start := time.Now()
	if out, err := exec.CommandContext(ctx, bin, "build", "tpcc", "--db", url, "--warehouses", strconv.Itoa(o.warehouses), "--no-job").CombinedOutput(); err != nil {
		return fmt.Errorf("sledge build: %v\n%s", err, redact(string(out)))
	}
	fmt.Printf("sledge build: %.0f s\n", time.Since(start).Seconds())
	if hdb != nil {
		start = time.Now()
		if out, err := hdb.build(ctx, srv, o.warehouses, o.vus); err != nil {
			return fmt.Errorf("HammerDB build: %v\n%s", err, redact(lastLines(out, 15)))
		}
		fmt.Printf("HammerDB build (its own buildschema, %d warehouses): %.0f s\n", o.warehouses, time.Since(start).Seconds())
	}
	fmt.Printf("load average at start: %s\n\n", loadAvg())

	type tool struct {
		name string
		run  func() (sample, error)
	}
	var tools []tool
	for _, m := range o.hdbModes {
		m := m
		tools = append(tools, tool{"HammerDB " + m, func() (sample, error) {
			s, out, err := hdb.run(ctx, srv, m, o)
			if err != nil {
				return s, fmt.Errorf("HammerDB %s: %v\n%s", m, err, redact(lastLines(out, 15)))
			}
			return s, nil
		}})
	}
	for _, m := range o.modes {
		m := m
		tools = append(tools, tool{"sledge " + m, func() (sample, error) {
			return runSledge(ctx, bin, url, m, o, redact)
		}})
	}
	fmt.Println("| round | tool | NOPM | TPM | client CPU µs/txn | client CPU µs/New-Order | load avg |")
	fmt.Println("|---|---|---|---|---|---|---|")
	res := make([][]sample, len(tools))
	for r := 1; r <= o.rounds; r++ {
		order := child.RoundOrder(len(tools), r)
		for _, i := range order {
			s, err := tools[i].run()
			if err != nil {
				return err
			}
			res[i] = append(res[i], s)
			fmt.Printf("| %d | %s | %.0f | %.0f | %.1f | %.1f | %s |\n", r, tools[i].name, s.nopm, s.tpm, s.txUs, s.noUs, loadAvg())
		}
	}
	med := func(i int, f func(sample) float64) float64 { return child.Median(res[i], f) }
	tx := func(s sample) float64 { return s.txUs }
	no := func(s sample) float64 { return s.noUs }
	// HammerDB's medians per driver: measured, or recorded.
	ref := map[string][2]float64{}
	src := "measured in this session"
	for i, t := range tools {
		if m, ok := strings.CutPrefix(t.name, "HammerDB "); ok {
			ref[m] = [2]float64{med(i, tx), med(i, no)}
		}
	}
	if len(ref) == 0 {
		src = "recorded (docs/benchmarks.md), HammerDB not run"
		for m, v := range recorded {
			ref[m] = [2]float64{v, 0}
		}
	}
	fmt.Printf("\nMedians; ratios are sledge's client CPU per transaction to HammerDB's; HammerDB's figures %s. Like for like: procedure mode\n", src)
	fmt.Printf("against HammerDB with stored procedures, the modes that send the statements from the client against HammerDB without (goal ≤ 0.5).\n\n")
	fmt.Println("| tool | median NOPM | median TPM | client CPU µs/txn | ratio to HammerDB storedprocs | ratio to HammerDB nostoredprocs | client CPU µs/New-Order | per-New-Order ratio to storedprocs | to nostoredprocs | like for like (goal ≤ 0.5) |")
	fmt.Println("|---|---|---|---|---|---|---|---|---|---|")
	ratio := func(a, b float64) string {
		if b <= 0 {
			return "-"
		}
		return fmt.Sprintf("%.2f", a/b)
	}
	for i, t := range tools {
		T, N := med(i, tx), med(i, no)
		like := "-"
		if m, ok := strings.CutPrefix(t.name, "sledge "); ok {
			d := "nostoredprocs"
			if m == "procedure" {
				d = "storedprocs"
			}
			like = ratio(T, ref[d][0])
		}
		fmt.Printf("| %s | %.0f | %.0f | %.1f | %s | %s | %.1f | %s | %s | %s |\n", t.name, med(i, func(s sample) float64 { return s.nopm }),
			med(i, func(s sample) float64 { return s.tpm }), T, ratio(T, ref["storedprocs"][0]), ratio(T, ref["nostoredprocs"][0]),
			N, ratio(N, ref["storedprocs"][1]), ratio(N, ref["nostoredprocs"][1]), like)
	}
	fmt.Printf("\nload average at end: %s\n", loadAvg())
	return nil
}

func runSledge(ctx context.Context, bin, url, mode string, o opts, redact func(string) string) (sample, error) {
	cmd := exec.CommandContext(ctx, bin, "run", "tpcc", "--db", url, "--mode", mode, "--vus", strconv.Itoa(o.vus),
		"--rampup", fmt.Sprintf("%dm", o.rampup), "--duration", fmt.Sprintf("%dm", o.duration), "--json", "--no-job")
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		return sample{}, fmt.Errorf("sledge %s: %v: %s", mode, err, redact(lastLines(errOut.String(), 5)))
	}
	var r struct {
		NOPM      *float64 `json:"nopm"`
		TPMClient float64  `json:"tpm_client"`
		PerTxn    struct {
			CPU *float64 `json:"client_cpu_us"`
		} `json:"per_txn"`
	}
	if err := json.Unmarshal(out.Bytes(), &r); err != nil || r.NOPM == nil || r.PerTxn.CPU == nil {
		return sample{}, fmt.Errorf("sledge %s: output not understood (%v): %s", mode, err, redact(lastLines(out.String(), 5)))
	}
	s := sample{nopm: *r.NOPM, tpm: r.TPMClient, txUs: *r.PerTxn.CPU}
	if s.nopm > 0 {
		s.noUs = s.txUs * s.tpm / s.nopm
	}
	return s, nil
}

// hammerdb is a runnable HammerDB: its directory and the environment its
// tclsh needs.
type hammerdb struct {
	dir, tclsh, tmp string
	env             []string
}

// prepareHammerDB finds HammerDB's source and checks that Tcl can load
// what its CLI and MySQL driver need; why says what is missing.
func prepareHammerDB(ctx context.Context, src, work string) (*hammerdb, string) {
	if src == "" {
		return nil, "no HammerDB source given (-hammerdb or $HAMMERDB_SRC: a checkout of github.com/TPC-Council/HammerDB, tag " + hammerdbTag + ")"
	}
	h := &hammerdb{dir: src, tmp: filepath.Join(work, "hammerdb-tmp")}
	if _, err := os.Stat(filepath.Join(src, "hammerdbcli")); err != nil {
		// A git directory: extract the tag's CLI, sources and scripts.
		h.dir = filepath.Join(work, "hammerdb")
		if err := os.MkdirAll(h.dir, 0o755); err != nil {
			return nil, err.Error()
		}
		arch := exec.CommandContext(ctx, "git", "--git-dir", src, "archive", hammerdbTag, "hammerdbcli", "config", "modules", "src")
		tar := exec.CommandContext(ctx, "tar", "-x", "-C", h.dir)
		pipe, err := arch.StdoutPipe()
		if err != nil {
			return nil, err.Error()
		}
		tar.Stdin = pipe
		var aerr bytes.Buffer
		arch.Stderr = &aerr
		if err := tar.Start(); err != nil {
			return nil, "tar: " + err.Error()
		}
		if err := arch.Run(); err != nil {
			_ = tar.Wait()
			return nil, fmt.Sprintf("%s is neither a HammerDB checkout nor a git directory with tag %s: %v %s", src, hammerdbTag, err, strings.TrimSpace(aerr.String()))
		}
		if err := tar.Wait(); err != nil {
			return nil, "extract HammerDB: " + err.Error()
		}
	}
	v, _ := os.ReadFile(filepath.Join(h.dir, "hammerdbcli"))
	if !bytes.Contains(v, []byte(`set hdb_version "`+hammerdbTag+`"`)) {
		return nil, fmt.Sprintf("%s is not HammerDB %s (hammerdbcli's hdb_version differs)", src, hammerdbTag)
	}
	tclsh, err := exec.LookPath("tclsh8.6")
	if err != nil {
		return nil, "tclsh8.6 not found (apt-get install tcl8.6 tcl-thread libsqlite3-tcl mysqltcl; scripts/install-hammerdb-deps.sh)"
	}
	h.tclsh = tclsh
	// ticklecharts draws charts for HammerDB's web service; the CLI loads
	// it at start only. Debian has no package of it: an empty one.
	shim := filepath.Join(work, "tcllib-shim", "ticklecharts")
	if err := os.MkdirAll(shim, 0o755); err != nil {
		return nil, err.Error()
	}
	if err := os.WriteFile(filepath.Join(shim, "pkgIndex.tcl"), []byte("package ifneeded ticklecharts 3.2 {package provide ticklecharts 3.2}\n"), 0o644); err != nil {
		return nil, err.Error()
	}
	if err := os.MkdirAll(h.tmp, 0o700); err != nil {
		return nil, err.Error()
	}
	// HammerDB keeps its job database in $TMP.
	h.env = append(os.Environ(), "TCLLIBPATH="+filepath.Dir(shim), "TMP="+h.tmp)
	check := exec.CommandContext(ctx, tclsh)
	check.Env = h.env
	check.Stdin = strings.NewReader("foreach p {Thread sqlite3 mysqltcl ticklecharts} { if {[catch {package require $p} m]} { puts \"missing Tcl package $p: $m\"; exit 1 } }\nexit 0\n")
	if out, err := check.CombinedOutput(); err != nil {
		return nil, strings.TrimSpace(string(out)) + " (apt-get install tcl-thread libsqlite3-tcl mysqltcl; scripts/install-hammerdb-deps.sh)"
	}
	return h, ""
}

// connection is the part of HammerDB's script that reaches the server:
// TCP on 127.0.0.1 (socket null, so that it does not use its default
// /tmp/mysql.sock).
func connection(srv *testdb.Server) string {
	return fmt.Sprintf(`dbset db mysql
dbset bm TPC-C
diset connection mysql_host 127.0.0.1
diset connection mysql_port %d
diset connection mysql_socket null
diset tpcc mysql_user %s
diset tpcc mysql_pass %s
diset tpcc mysql_dbase hammerdb
diset tpcc mysql_storage_engine innodb
`, srv.Port, srv.User, srv.Password)
}

// script writes a HammerDB CLI script (it holds the password: 0600 in
// the tool's private directory) and returns its path.
func (h *hammerdb) script(name, body string) (string, error) {
	p := filepath.Join(h.tmp, name+".tcl")
	return p, os.WriteFile(p, []byte(body), 0o600)
}

func (h *hammerdb) command(ctx context.Context, script string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, h.tclsh, "hammerdbcli", "auto", script)
	cmd.Dir = h.dir
	cmd.Env = h.env
	cmd.Stdin = nil
	return cmd
}

func (h *hammerdb) build(ctx context.Context, srv *testdb.Server, warehouses, vus int) (string, error) {
	p, err := h.script("build", connection(srv)+fmt.Sprintf(`diset tpcc mysql_count_ware %d
diset tpcc mysql_num_vu %d
diset tpcc mysql_partition false
buildschema
puts "SCHEMA BUILD COMPLETED"
exit
`, warehouses, min(vus, warehouses)))
	if err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(ctx, time.Duration(30+5*warehouses)*time.Minute)
	defer cancel()
	out, err := h.command(ctx, p).CombinedOutput()
	if err == nil && !bytes.Contains(out, []byte("HAMMERDB SCHEMA COMPLETE")) {
		err = errors.New("no \"HAMMERDB SCHEMA COMPLETE\" in its output")
	}
	return string(out), err
}

var (
	// HammerDB's two forms of its result (tpcccommon's testresult).
	resultRe  = regexp.MustCompile(`TEST RESULT : System achieved ([0-9.]+) NOPM from ([0-9.]+) \S+ TPM`)
	resultRe2 = regexp.MustCompile(`TEST RESULT : System achieved ([0-9.]+) \S+ TPM at ([0-9.]+) NOPM`)
	startRe   = regexp.MustCompile(`Rampup complete, Taking start Transaction Count`)
	endRe     = regexp.MustCompile(`Test complete, Taking end Transaction Count`)
)

// run runs HammerDB's timed TPROC-C driver once and measures its
// process's CPU between its start and end transaction counts.
func (h *hammerdb) run(ctx context.Context, srv *testdb.Server, mode string, o opts) (sample, string, error) {
	noSP := mode == "nostoredprocs"
	p, err := h.script("run-"+mode, connection(srv)+fmt.Sprintf(`diset tpcc mysql_driver timed
diset tpcc mysql_rampup %d
diset tpcc mysql_duration %d
diset tpcc mysql_allwarehouse false
diset tpcc mysql_timeprofile false
diset tpcc mysql_prepared false
diset tpcc mysql_no_stored_procs %t
loadscript
vuset vu %d
vuset logtotemp 0
vucreate
vurun
vudestroy
exit
`, o.rampup, o.duration, noSP, o.vus))
	if err != nil {
		return sample{}, "", err
	}
	// A HammerDB that hangs (a virtual user stuck on a lock it never
	// gets) is killed well after its run should have ended.
	ctx, cancel := context.WithTimeout(ctx, time.Duration(o.rampup+o.duration+5)*time.Minute)
	defer cancel()
	cmd := h.command(ctx, p)
	pr, pw := io.Pipe()
	cmd.Stdout, cmd.Stderr = pw, pw
	if err := cmd.Start(); err != nil {
		return sample{}, "", err
	}
	var all strings.Builder
	var cpu0, cpu1 float64
	var got0, got1 bool
	var s sample
	done := make(chan error, 1)
	go func() { done <- cmd.Wait(); pw.Close() }()
	sc := bufio.NewScanner(pr)
	for sc.Scan() {
		line := sc.Text()
		all.WriteString(line + "\n")
		switch {
		case startRe.MatchString(line):
			cpu0, err = procCPU(cmd.Process.Pid)
			got0 = err == nil
		case endRe.MatchString(line):
			cpu1, err = procCPU(cmd.Process.Pid)
			got1 = err == nil
		}
		if m := resultRe.FindStringSubmatch(line); m != nil {
			s.nopm, _ = strconv.ParseFloat(m[1], 64)
			s.tpm, _ = strconv.ParseFloat(m[2], 64)
		} else if m := resultRe2.FindStringSubmatch(line); m != nil {
			s.tpm, _ = strconv.ParseFloat(m[1], 64)
			s.nopm, _ = strconv.ParseFloat(m[2], 64)
		}
	}
	if err := <-done; err != nil {
		return s, all.String(), err
	}
	if !got0 || !got1 || s.tpm == 0 {
		return s, all.String(), errors.New("its output has no start and end transaction counts and TEST RESULT")
	}
	minutes := float64(o.duration)
	s.txUs = (cpu1 - cpu0) / (s.tpm * minutes)
	if s.nopm > 0 {
		s.noUs = (cpu1 - cpu0) / (s.nopm * minutes)
	}
	return s, all.String(), nil
}

// procCPU is the user + system CPU in µs of process pid and every
// process under it (HammerDB's virtual users are threads of the one
// tclsh, counted in its /proc/PID/stat; children are counted in case a
// version forks).
func procCPU(pid int) (float64, error) {
	stat := func(p int) (float64, int, error) {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p))
		if err != nil {
			return 0, 0, err
		}
		f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+2:]))
		ppid, _ := strconv.Atoi(f[1])
		u, _ := strconv.ParseFloat(f[11], 64)
		sy, _ := strconv.ParseFloat(f[12], 64)
		return u + sy, ppid, nil
	}
	total, _, err := stat(pid)
	if err != nil {
		return 0, fmt.Errorf("HammerDB's CPU: %w", err)
	}
	ents, _ := os.ReadDir("/proc")
	parent := map[int]int{}
	ticks := map[int]float64{}
	for _, e := range ents {
		p, err := strconv.Atoi(e.Name())
		if err != nil || p == pid {
			continue
		}
		if t, pp, err := stat(p); err == nil {
			parent[p], ticks[p] = pp, t
		}
	}
	for p, t := range ticks {
		for q := parent[p]; q > 1; q = parent[q] {
			if q == pid {
				total += t
				break
			}
		}
	}
	const hz = 100 // USER_HZ on Linux
	return total / hz * 1e6, nil
}

func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	if f := strings.Fields(string(b)); len(f) > 0 {
		return f[0]
	}
	return "?"
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
