// Command agent measures issue 25's `sledge agent` (make bench-agent and
// make bench-agent-seed), with private servers on this machine and the
// agent as its own process on loopback, reached with a token as from
// another host:
//
//   - overhead: sledge run tpcc with and without --agent in alternating
//     rounds on a private PostgreSQL (procedure mode, -vus VUs): median
//     NOPM of each and the median of the per-round ratios. Without
//     --agent a local server is sampled in-process by the same code, so
//     this is the cost of sampling through the agent's HTTP API.
//   - cpu: the agent's own CPU (its process's utime+stime from
//     /proc/PID/stat over -cpu-for) while one watch samples a server with
//     -connections idle connections at 100 Hz and a client reads its
//     seconds once a second, as a run does: PostgreSQL (a process per
//     connection) and MariaDB (a thread per connection). With -profile
//     DIR a second agent watches the same server at the same time: the
//     same agent code (agent.New, as `sledge agent` serves it) in a
//     process of this tool's own that writes a CPU profile (sledge agent
//     has no --cpuprofile); its CPU is reported beside, and `go tool
//     pprof -top`'s first lines are printed.
//   - seed (-seed): issue 25 §3's table, the seed's comparison reproduced
//     with sledge alone: MariaDB and PostgreSQL, -vus VUs, each mode one
//     run with --agent; per transaction the client's and the server's
//     context switches, the server's run-queue delay, the share of the
//     server threads' samples in a network wait, bytes on the server's
//     port, client and server CPU.
//
// Load goes only to 127.0.0.1.
package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5"

	agentpkg "github.com/sledge-bench/sledge/internal/agent"
	"github.com/sledge-bench/sledge/internal/benchtool/child"
	"github.com/sledge-bench/sledge/internal/sysprobe"
	"github.com/sledge-bench/sledge/internal/testdb"
)

type options struct {
	parts      []string
	seed       bool
	dbs, modes []string
	vus        int
	warehouses int
	rounds     int
	rampup     time.Duration
	duration   time.Duration
	cpuFor     time.Duration
	conns      int
	profile    string
}

func main() {
	// -serve-agent: the profiled copy of the agent (see agentCPU).
	if len(os.Args) == 5 && os.Args[1] == "-serve-agent" {
		if err := serveAgent(os.Args[2], os.Args[3], os.Args[4]); err != nil {
			fmt.Fprintln(os.Stderr, "bench agent: serve:", err)
			os.Exit(1)
		}
		return
	}
	var o options
	parts := flag.String("parts", "overhead,cpu", "what to measure: overhead, cpu (ignored with -seed)")
	flag.BoolVar(&o.seed, "seed", false, "print issue 25 §3's table instead: every mode on each database with --agent")
	dbs := flag.String("dbs", "mariadb,postgres", "databases of the -seed table")
	modes := flag.String("modes", "procedure,client,prepared,batched,pipeline", "modes of the -seed table")
	flag.IntVar(&o.vus, "vus", 4, "virtual users")
	flag.IntVar(&o.warehouses, "warehouses", 4, "TPC-C warehouses")
	flag.IntVar(&o.rounds, "rounds", 5, "overhead: rounds, each one run with --agent and one without, in alternating order")
	flag.DurationVar(&o.rampup, "rampup", 3*time.Second, "ramp-up per run")
	flag.DurationVar(&o.duration, "duration", 20*time.Second, "measured interval per run")
	flag.DurationVar(&o.cpuFor, "cpu-for", time.Minute, "cpu: how long the agent's CPU is measured per server")
	flag.IntVar(&o.conns, "connections", 200, "cpu: idle connections held open to each server")
	flag.StringVar(&o.profile, "profile", "", "cpu: a directory for the agent's CPU profiles (one per server)")
	flag.Parse()
	o.parts, o.dbs, o.modes = split(*parts), split(*dbs), split(*modes)
	if o.vus < 1 || o.warehouses < 1 || o.rounds < 1 || o.conns < 1 || o.duration <= 0 || o.cpuFor <= 0 {
		fmt.Fprintln(os.Stderr, "bench agent: -vus, -warehouses, -rounds, -connections, -duration and -cpu-for must be positive")
		os.Exit(2)
	}
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "bench agent:", err)
		os.Exit(1)
	}
}

func split(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

func run(o options) error {
	dir, err := os.MkdirTemp("", "sledge-bench-agent-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	bin := filepath.Join(dir, "sledge")
	if err := child.BuildSledge(bin); err != nil {
		return err
	}
	b := &bench{o: o, bin: bin, dir: dir, env: append(os.Environ(), "XDG_DATA_HOME="+filepath.Join(dir, "data"))}
	if o.seed {
		return b.seedTable()
	}
	for _, p := range o.parts {
		switch p {
		case "overhead":
			err = b.overhead()
		case "cpu":
			err = b.agentCPU()
		default:
			err = fmt.Errorf("-parts: unknown part %q (overhead, cpu)", p)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

type bench struct {
	o   options
	bin string
	dir string
	env []string
}

// agentProc is a `sledge agent` process on loopback with a token.
type agentProc struct {
	addr, token, tokenFile string
	cmd                    *exec.Cmd
	done                   chan struct{}
	out                    bytes.Buffer
}

func (b *bench) startAgent(profile string) (*agentProc, error) {
	raw := make([]byte, 16)
	if _, err := rand.Read(raw); err != nil {
		return nil, err
	}
	port, err := testdb.FreePort()
	if err != nil {
		return nil, err
	}
	a := &agentProc{addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), token: hex.EncodeToString(raw),
		done: make(chan struct{})}
	a.tokenFile = filepath.Join(b.dir, "token-"+strconv.Itoa(port))
	if err := os.WriteFile(a.tokenFile, []byte(a.token+"\n"), 0o600); err != nil {
		return nil, err
	}
	if profile == "" {
		a.cmd = exec.Command(b.bin, "agent", "--listen", a.addr, "--token-file", a.tokenFile)
	} else {
		self, err := os.Executable()
		if err != nil {
			return nil, err
		}
		a.cmd = exec.Command(self, "-serve-agent", a.addr, a.tokenFile, profile)
	}
	a.cmd.Stdout, a.cmd.Stderr = &a.out, &a.out
	if err := a.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start agent: %w", err)
	}
	go func() { _ = a.cmd.Wait(); close(a.done) }()
	for start := time.Now(); ; {
		if c, err := net.DialTimeout("tcp", a.addr, time.Second); err == nil {
			c.Close()
			return a, nil
		}
		select {
		case <-a.done:
			return nil, fmt.Errorf("agent exited: %s", strings.TrimSpace(a.out.String()))
		case <-time.After(50 * time.Millisecond):
		}
		if time.Since(start) > 30*time.Second {
			a.stop()
			return nil, fmt.Errorf("agent on %s did not answer within 30s", a.addr)
		}
	}
}

// stop ends the agent as an operator would: SIGTERM, exit 0, which also
// flushes a --cpuprofile.
func (a *agentProc) stop() {
	_ = a.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-a.done:
	case <-time.After(10 * time.Second):
		_ = a.cmd.Process.Kill()
		<-a.done
	}
}

// request is one call of the agent's HTTP API v1 with the token.
func (a *agentProc) request(method, path string, body any, into any) error {
	var rd io.Reader
	if body != nil {
		j, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(j)
	}
	req, err := http.NewRequest(method, "http://"+a.addr+path, rd)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+a.token)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	c := &http.Client{Timeout: 10 * time.Second}
	resp, err := c.Do(req)
	if err != nil {
		return fmt.Errorf("agent %s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("agent %s %s: %s: %s", method, path, resp.Status, strings.TrimSpace(string(data)))
	}
	if into != nil {
		if err := json.Unmarshal(data, into); err != nil {
			return fmt.Errorf("agent %s %s: %w", method, path, err)
		}
	}
	return nil
}

// sledge runs the sledge binary and returns its stdout.
func (b *bench) sledge(password string, args ...string) ([]byte, error) {
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(b.bin, args...)
	cmd.Env = b.env
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("sledge %s: %v: %s", strings.Join(child.RedactArgs(args, password), " "),
			err, strings.ReplaceAll(strings.TrimSpace(stderr.String()), password, "REDACTED"))
	}
	return stdout.Bytes(), nil
}

func dbURL(s *testdb.Server, name string) string {
	scheme := "postgres"
	if s.Kind == "mariadb" {
		scheme = "mysql"
	}
	return fmt.Sprintf("%s://%s:%s@%s/%s", scheme, s.User, s.Password, net.JoinHostPort(s.Host, strconv.Itoa(s.Port)), name)
}

func (b *bench) runArgs(u, mode string) []string {
	return []string{"run", "tpcc", "--db", u, "--mode", mode, "--vus", strconv.Itoa(b.o.vus),
		"--rampup", b.o.rampup.String(), "-T", b.o.duration.String(), "--json", "--no-job"}
}

// overhead: NOPM with and without --agent, alternating.
func (b *bench) overhead() error {
	ctx := context.Background()
	srv, err := testdb.StartPostgres(ctx)
	if err != nil {
		return err
	}
	defer srv.Stop()
	u := dbURL(srv, "agentbench")
	if _, err := b.sledge(srv.Password, "build", "tpcc", "--db", u, "--warehouses", strconv.Itoa(b.o.warehouses), "--no-job"); err != nil {
		return err
	}
	a, err := b.startAgent("")
	if err != nil {
		return err
	}
	defer a.stop()
	type sample struct{ nopm, ratio float64 }
	got := map[bool][]sample{}
	for r := range b.o.rounds {
		order := []bool{false, true}
		if r%2 == 1 {
			order = []bool{true, false}
		}
		round := map[bool]float64{}
		for _, withAgent := range order {
			args := b.runArgs(u, "procedure")
			if withAgent {
				args = append(args, "--agent", a.addr, "--agent-token-file", a.tokenFile)
			}
			out, err := b.sledge(srv.Password, args...)
			if err != nil {
				return err
			}
			var res map[string]any
			if err := json.Unmarshal(out, &res); err != nil {
				return fmt.Errorf("--json: %w", err)
			}
			nopm, ok := num(res, "nopm")
			if !ok {
				return fmt.Errorf("no nopm in --json: %s", out)
			}
			if withAgent {
				if _, ok := res["agent"]; !ok {
					return fmt.Errorf("a run with --agent has no \"agent\" in --json")
				}
			}
			round[withAgent] = nopm
			fmt.Fprintf(os.Stderr, "round %d: --agent %v: NOPM %.0f\n", r+1, withAgent, nopm)
		}
		for _, w := range []bool{false, true} {
			got[w] = append(got[w], sample{round[w], round[w] / round[false]})
		}
	}
	fmt.Printf("PostgreSQL %s, TPC-C, %d warehouses, %d VUs, --mode procedure, %s ramp-up + %s measured, %d rounds (order alternating), medians\n\n",
		srv.Version, b.o.warehouses, b.o.vus, b.o.rampup, b.o.duration, b.o.rounds)
	fmt.Println("| run | NOPM (median) | ÷ without --agent (same round, median) | NOPM of each round |")
	fmt.Println("|---|---|---|---|")
	for _, w := range []bool{false, true} {
		name := "without --agent (in-process sampler)"
		if w {
			name = "with --agent (agent process, loopback, token)"
		}
		var each []string
		for _, s := range got[w] {
			each = append(each, fmt.Sprintf("%.0f", s.nopm))
		}
		fmt.Printf("| %s | %.0f | %.3f | %s |\n", name, child.Median(got[w], func(s sample) float64 { return s.nopm }),
			child.Median(got[w], func(s sample) float64 { return s.ratio }), strings.Join(each, ", "))
	}
	fmt.Println()
	return nil
}

// agentCPU: the agent's own CPU while it watches a server with many
// connections.
func (b *bench) agentCPU() error {
	ctx := context.Background()
	fmt.Printf("The agent's own CPU (utime+stime of its process, /proc/PID/stat) over %s, one watch at 100 Hz, its seconds read once a second\n\n", b.o.cpuFor)
	head := "| server | connections | server processes | server threads | sledge agent's CPU (% of one core) | sledge agent's RSS (MB, end) |"
	if b.o.profile != "" {
		head += " profiled copy's CPU (% of one core) |"
	}
	fmt.Println(head)
	fmt.Println("|---|---|---|---|---|---|" + map[bool]string{true: "---|"}[b.o.profile != ""])
	var profiles []string
	for _, kind := range []string{"postgres", "mariadb"} {
		var srv *testdb.Server
		var err error
		if kind == "postgres" {
			srv, err = testdb.StartPostgresWith(ctx, fmt.Sprintf("max_connections=%d", b.o.conns+20))
		} else {
			srv, err = testdb.StartMariaDB(ctx)
		}
		if err != nil {
			return err
		}
		closeConns, err := openIdle(ctx, srv, b.o.conns)
		if err != nil {
			srv.Stop()
			return err
		}
		prof := ""
		if b.o.profile != "" {
			if err := os.MkdirAll(b.o.profile, 0o755); err != nil {
				return err
			}
			prof = filepath.Join(b.o.profile, "agent-"+kind+".pprof")
		}
		row, err := b.watchCPU(srv, prof)
		closeConns()
		srv.Stop()
		if err != nil {
			return err
		}
		fmt.Printf("| %s %s | %d | %s |\n", kind, srv.Version, b.o.conns, row)
		if prof != "" {
			profiles = append(profiles, prof)
		}
	}
	fmt.Println()
	self, _ := os.Executable()
	for _, p := range profiles {
		out, err := exec.Command("go", "tool", "pprof", "-top", "-nodecount=20", self, p).CombinedOutput()
		if err != nil {
			return fmt.Errorf("go tool pprof -top %s: %v: %s", p, err, out)
		}
		fmt.Printf("`go tool pprof -top %s`:\n\n```\n%s```\n\n", filepath.Base(p), out)
	}
	return nil
}

// watch is one agent's watch of a server, read as a run reads it.
type watch struct {
	a     *agentProc
	id    string
	hz    int
	procs int
	thr   int
	after int64
	t0    int64
}

func (a *agentProc) watch(port int) (*watch, error) {
	var ans struct {
		ID      string `json:"id"`
		StateHz int    `json:"state_hz"`
		Found   []struct {
			Threads int `json:"threads"`
		} `json:"found"`
	}
	if err := a.request("POST", "/v1/watches", map[string]any{"target": map[string]int{"port": port}}, &ans); err != nil {
		return nil, err
	}
	w := &watch{a: a, id: ans.ID, hz: ans.StateHz, procs: len(ans.Found)}
	for _, p := range ans.Found {
		w.thr += p.Threads
	}
	var err error
	w.t0, err = child.ProcTicks(a.cmd.Process.Pid)
	return w, err
}

// poll reads the seconds since the last poll, as a run does once a second.
func (w *watch) poll() error {
	var secs []struct {
		Seq int64 `json:"seq"`
	}
	if err := w.a.request("GET", "/v1/watches/"+w.id+"/seconds?after="+strconv.FormatInt(w.after, 10), nil, &secs); err != nil {
		return err
	}
	if len(secs) > 0 {
		w.after = secs[len(secs)-1].Seq
	}
	return nil
}

// cpu is the agent's CPU since the watch began, % of one core over wall.
func (w *watch) cpu(wall time.Duration) (float64, error) {
	t1, err := child.ProcTicks(w.a.cmd.Process.Pid)
	if err != nil {
		return 0, err
	}
	return 100 * float64(t1-w.t0) / float64(child.ClockTicks) / wall.Seconds(), nil
}

// watchCPU starts a sledge agent (and with profile a profiled copy), each
// watches srv's port at 100 Hz for cpuFor while its seconds are read once
// a second, and returns the table's cells.
func (b *bench) watchCPU(srv *testdb.Server, profile string) (string, error) {
	a, err := b.startAgent("")
	if err != nil {
		return "", err
	}
	defer a.stop()
	agents := []*agentProc{a}
	if profile != "" {
		p, err := b.startAgent(profile)
		if err != nil {
			return "", err
		}
		// stop (SIGTERM) flushes the profile; stopped before it is read.
		defer p.stop()
		agents = append(agents, p)
	}
	var ws []*watch
	for _, ag := range agents {
		w, err := ag.watch(srv.Port)
		if err != nil {
			return "", err
		}
		ws = append(ws, w)
	}
	start := time.Now()
	for time.Since(start) < b.o.cpuFor {
		time.Sleep(time.Second)
		for _, w := range ws {
			if err := w.poll(); err != nil {
				return "", err
			}
		}
	}
	wall := time.Since(start)
	var pct []float64
	for _, w := range ws {
		p, err := w.cpu(wall)
		if err != nil {
			return "", err
		}
		pct = append(pct, p)
		_ = w.a.request("DELETE", "/v1/watches/"+w.id, nil, nil)
	}
	st, _ := child.ProcStatus(a.cmd.Process.Pid)
	w := ws[0]
	fmt.Fprintf(os.Stderr, "%s: sledge agent's CPU %.2f%% of a core over %s, watch at %d Hz, %d processes, %d threads\n",
		srv.Kind, pct[0], wall.Round(time.Second), w.hz, w.procs, w.thr)
	row := fmt.Sprintf("%d | %d | %.2f%% | %.1f", w.procs, w.thr, pct[0], float64(st.RSSKB)/1024)
	if len(pct) > 1 {
		ws[1].a.stop()
		row += fmt.Sprintf(" | %.2f%%", pct[1])
	}
	return row, nil
}

// serveAgent is the profiled copy of `sledge agent --listen addr
// --token-file F`: the same handler (agent.New over sysprobe), its CPU
// profile written to profile when SIGTERM ends it.
func serveAgent(addr, tokenFile, profile string) error {
	token, err := agentpkg.ReadToken(tokenFile)
	if err != nil {
		return err
	}
	f, err := os.Create(profile)
	if err != nil {
		return err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		return err
	}
	srv := agentpkg.New(agentpkg.Config{Version: "bench copy", Token: token,
		Options: sysprobe.Options{Exclude: []int{os.Getpid()}}})
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	hs := &http.Server{Handler: srv, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = hs.Serve(ln) }()
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, os.Interrupt)
	<-sig
	_ = hs.Close()
	_ = srv.Close()
	pprof.StopCPUProfile()
	return f.Close()
}

// openIdle opens n idle connections to srv and returns what closes them.
func openIdle(ctx context.Context, srv *testdb.Server, n int) (func(), error) {
	if srv.Kind == "postgres" {
		var conns []*pgx.Conn
		closeAll := func() {
			for _, c := range conns {
				_ = c.Close(ctx)
			}
		}
		for range n {
			c, err := pgx.Connect(ctx, dbURL(srv, "postgres"))
			if err != nil {
				closeAll()
				return nil, fmt.Errorf("connection %d to postgres: %w", len(conns)+1, err)
			}
			conns = append(conns, c)
		}
		return closeAll, nil
	}
	c := mysql.NewConfig()
	c.User, c.Passwd, c.Net, c.Addr = srv.User, srv.Password, "tcp", net.JoinHostPort(srv.Host, strconv.Itoa(srv.Port))
	db, err := sql.Open("mysql", c.FormatDSN())
	if err != nil {
		return nil, err
	}
	db.SetMaxIdleConns(n)
	var conns []*sql.Conn
	closeAll := func() {
		for _, c := range conns {
			_ = c.Close()
		}
		_ = db.Close()
	}
	for range n {
		cn, err := db.Conn(ctx)
		if err == nil {
			err = cn.PingContext(ctx)
		}
		if err != nil {
			closeAll()
			return nil, fmt.Errorf("connection %d to mariadb: %w", len(conns)+1, err)
		}
		conns = append(conns, cn)
	}
	return closeAll, nil
}

// num reads a number at a dotted path of a decoded JSON object.
func num(m map[string]any, path string) (float64, bool) {
	var v any = m
	for _, k := range strings.Split(path, ".") {
		o, ok := v.(map[string]any)
		if !ok {
			return 0, false
		}
		v = o[k]
	}
	f, ok := v.(float64)
	return f, ok
}

// seedTable: every mode on each database with the agent as its own
// process, one markdown table.
func (b *bench) seedTable() error {
	ctx := context.Background()
	type row struct {
		db, mode string
		res      map[string]any
	}
	var rows []row
	versions := map[string]string{}
	for _, kind := range b.o.dbs {
		var srv *testdb.Server
		var err error
		switch kind {
		case "postgres":
			srv, err = testdb.StartPostgres(ctx)
		case "mariadb":
			srv, err = testdb.StartMariaDB(ctx)
		default:
			return fmt.Errorf("-dbs: unknown database %q (mariadb, postgres)", kind)
		}
		if err != nil {
			return err
		}
		versions[kind] = srv.Version
		err = func() error {
			defer srv.Stop()
			u := dbURL(srv, "agentseed")
			if _, err := b.sledge(srv.Password, "build", "tpcc", "--db", u, "--warehouses", strconv.Itoa(b.o.warehouses), "--no-job"); err != nil {
				return err
			}
			a, err := b.startAgent("")
			if err != nil {
				return err
			}
			defer a.stop()
			for _, mode := range b.o.modes {
				out, err := b.sledge(srv.Password, append(b.runArgs(u, mode), "--agent", a.addr, "--agent-token-file", a.tokenFile)...)
				if err != nil {
					return err
				}
				var res map[string]any
				if err := json.Unmarshal(out, &res); err != nil {
					return fmt.Errorf("--json: %w", err)
				}
				rows = append(rows, row{kind, mode, res})
				fmt.Fprintf(os.Stderr, "%s %s: done\n", kind, mode)
			}
			return nil
		}()
		if err != nil {
			return err
		}
	}
	names := slices.Sorted(func(yield func(string) bool) {
		for k := range versions {
			if !yield(k) {
				return
			}
		}
	})
	var vs []string
	for _, k := range names {
		vs = append(vs, k+" "+versions[k])
	}
	fmt.Printf("TPC-C, %d warehouses, %d VUs, %s ramp-up + %s measured, one run per cell, the agent as its own process (loopback, token); %s\n\n",
		b.o.warehouses, b.o.vus, b.o.rampup, b.o.duration, strings.Join(vs, ", "))
	fmt.Println("| database | mode | NOPM | client context switches/txn | server context switches/txn | server run-queue delay µs/txn | server threads in network wait | bytes on the server's port/txn | client CPU µs/txn | server CPU µs/txn |")
	fmt.Println("|---|---|---|---|---|---|---|---|---|---|")
	f := func(m map[string]any, format string, paths ...string) string {
		sum := 0.0
		for _, p := range paths {
			v, ok := num(m, p)
			if !ok {
				return "–"
			}
			sum += v
		}
		return fmt.Sprintf(format, sum)
	}
	for _, r := range rows {
		share := f(r.res, "%.3f", "server_threads.network")
		if v, ok := num(r.res, "server_threads.network"); ok {
			share = fmt.Sprintf("%.0f%%", 100*v)
		}
		fmt.Printf("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", r.db, r.mode,
			f(r.res, "%.0f", "nopm"),
			f(r.res, "%.1f", "per_txn.context_switches"),
			f(r.res, "%.1f", "server_per_txn.context_switches"),
			f(r.res, "%.0f", "server_per_txn.run_queue_delay_us"),
			share,
			f(r.res, "%.0f", "server_per_txn.port_bytes_in", "server_per_txn.port_bytes_out"),
			f(r.res, "%.0f", "per_txn.client_cpu_us"),
			f(r.res, "%.0f", "server_per_txn.cpu_user_us", "server_per_txn.cpu_sys_us"))
	}
	return nil
}
