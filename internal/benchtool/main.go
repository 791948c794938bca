// Command benchtool runs sledge's server benchmarks (make bench) against
// private throwaway servers: for each database, a schema with one warehouse
// per virtual user is built (timed), then each mode runs back to back on it,
// and a Markdown table of NOPM, TPM and build time per warehouse is printed,
// with the client's CPU per transaction (the whole sledge process, its own
// per_txn.client_cpu_us) and per round trip. On PostgreSQL, pgbench runs a
// one-statement prepared script (-M prepared, one round trip per
// transaction) on the same database with as many clients, right after the
// modes, so that prepared mode's CPU per round trip stands beside pgbench's
// own measured in the same minutes (issue 26's goal: ≤ 1.0x).
// Network load goes only to 127.0.0.1 and unix sockets in the temp dir.
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
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/sledge-bench/sledge/internal/benchtool/child"
	"github.com/sledge-bench/sledge/internal/testdb"
)

var cpuProfile string

func main() {
	dbs := flag.String("dbs", "postgres,mariadb", "databases to measure")
	modes := flag.String("modes", "procedure,client,prepared", "modes, run in this order")
	vusList := flag.String("vus", "2,4", "virtual-user counts (one warehouse per VU)")
	rampup := flag.Duration("rampup", 5*time.Second, "ramp-up per run")
	duration := flag.Duration("duration", 30*time.Second, "measured interval per run")
	transport := flag.String("transport", "tcp", "tcp or unix")
	flag.StringVar(&cpuProfile, "cpuprofile", "", "write each run's CPU profile of sledge to PREFIX.<database>.<vus>.<mode>")
	flag.Parse()
	if err := run(*dbs, *modes, *vusList, *rampup, *duration, *transport); err != nil {
		fmt.Fprintln(os.Stderr, "benchtool:", err)
		os.Exit(1)
	}
}

type summary struct {
	NOPM      float64 `json:"nopm"`
	TPM       float64 `json:"tpm"`
	TPMSource string  `json:"tpm_source"`
	TPMClient float64 `json:"tpm_client"`
	DBVersion string  `json:"db_version"`
	Total     struct {
		Errors  int64   `json:"errors"`
		Retries int64   `json:"retries"`
		P90     float64 `json:"p90_ms"`
	} `json:"total"`
	Settings map[string]string `json:"db_settings"`
	PerTxn   *struct {
		RoundTrips float64 `json:"round_trips"`
		CPU        float64 `json:"client_cpu_us"`
	} `json:"per_txn"`
}

func run(dbs, modes, vusList string, rampup, duration time.Duration, transport string) error {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "sledge-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	bin := filepath.Join(dir, "sledge")
	if err := child.BuildSledge(bin); err != nil {
		return err
	}
	fmt.Printf("| database | VUs = warehouses | mode | NOPM | TPM (source) | TPM client | NOPM vs client | round trips/txn | client CPU µs/txn | total p90 ms | errors | retries | client CPU µs/round trip |\n")
	fmt.Printf("|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	var builds []string
	// Prepared mode's CPU per round trip beside pgbench's, per database
	// and VU count.
	var perRT []string
	var settings []string
	for _, kind := range strings.Split(dbs, ",") {
		var srv *testdb.Server
		switch kind {
		case "postgres":
			srv, err = testdb.StartPostgres(ctx)
		case "mariadb":
			srv, err = testdb.StartMariaDB(ctx)
		default:
			return fmt.Errorf("unknown database %q", kind)
		}
		if err != nil {
			return fmt.Errorf("start %s: %w", kind, err)
		}
		for _, vus := range strings.Split(vusList, ",") {
			name := fmt.Sprintf("bench_w%s", vus)
			url := serverURL(srv, name, transport)
			start := time.Now()
			if out, err := exec.Command(bin, "build", "--db", url, "--warehouses", vus, "--json").CombinedOutput(); err != nil {
				srv.Stop()
				return fmt.Errorf("build %s: %v\n%s", kind, err, out)
			}
			var w int
			fmt.Sscan(vus, &w)
			el := time.Since(start).Seconds()
			builds = append(builds, fmt.Sprintf("| %s | %d | %.1f | %.2f |", kind, w, el, el/float64(w)))
			var clientNOPM float64
			rows := []string{}
			results := map[string]summary{}
			for _, mode := range strings.Split(modes, ",") {
				args := []string{"run", "--db", url, "--mode", mode, "--vus", vus,
					"--rampup", rampup.String(), "--duration", duration.String(), "--json"}
				if cpuProfile != "" {
					args = append(args, "--cpuprofile", fmt.Sprintf("%s.%s.%s.%s", cpuProfile, kind, vus, mode))
				}
				out, err := exec.Command(bin, args...).Output()
				if err != nil {
					srv.Stop()
					return fmt.Errorf("run %s %s: %v", kind, mode, err)
				}
				var s summary
				if err := json.Unmarshal(bytes.TrimSpace(out), &s); err != nil {
					srv.Stop()
					return fmt.Errorf("run %s %s: %v: %s", kind, mode, err, out)
				}
				results[mode] = s
				if mode == "client" {
					clientNOPM = s.NOPM
				}
				if len(settings) == 0 || !strings.HasPrefix(settings[len(settings)-1], "- "+kind) {
					settings = append(settings, fmt.Sprintf("- %s %s: %v", kind, s.DBVersion, s.Settings))
				}
			}
			for _, mode := range strings.Split(modes, ",") {
				s := results[mode]
				ratio := "-"
				if clientNOPM > 0 {
					ratio = fmt.Sprintf("%.2f", s.NOPM/clientNOPM)
				}
				rt, cpu, cpuRT := "-", "-", "-"
				if s.PerTxn != nil {
					rt, cpu = fmt.Sprintf("%.1f", s.PerTxn.RoundTrips), fmt.Sprintf("%.0f", s.PerTxn.CPU)
					if s.PerTxn.RoundTrips > 0 {
						cpuRT = fmt.Sprintf("%.1f", s.PerTxn.CPU/s.PerTxn.RoundTrips)
					}
				}
				rows = append(rows, fmt.Sprintf("| %s | %s | %s | %.0f | %.0f (%s) | %.0f | %s | %s | %s | %.2f | %d | %d | %s |",
					kind, vus, mode, s.NOPM, s.TPM, s.TPMSource, s.TPMClient, ratio, rt, cpu, s.Total.P90, s.Total.Errors, s.Total.Retries, cpuRT))
			}
			fmt.Println(strings.Join(rows, "\n"))
			if p, ok := results["prepared"]; ok && p.PerTxn != nil && p.PerTxn.RoundTrips > 0 {
				mine := p.PerTxn.CPU / p.PerTxn.RoundTrips
				theirs, note := "-", "pgbench is PostgreSQL's"
				ratio := "-"
				if kind == "postgres" {
					us, err := pgbenchPerRoundTrip(srv, name, vus, transport, duration, dir)
					if err != nil {
						note = err.Error()
					} else {
						theirs, ratio, note = fmt.Sprintf("%.1f", us), fmt.Sprintf("%.2f", mine/us), "pgbench -M prepared, one-statement script"
					}
				}
				perRT = append(perRT, fmt.Sprintf("| %s | %s | %.1f | %s | %s | %s |", kind, vus, mine, theirs, ratio, note))
			}
		}
		srv.Stop()
	}
	fmt.Printf("\n| database | warehouses | build s | s per warehouse |\n|---|---|---|---|\n%s\n", strings.Join(builds, "\n"))
	if len(perRT) > 0 {
		fmt.Printf("\n| database | VUs | sledge prepared client CPU µs/round trip | pgbench client CPU µs/round trip | ratio (goal ≤ 1.0) | pgbench run |\n|---|---|---|---|---|---|\n%s\n", strings.Join(perRT, "\n"))
	}
	fmt.Printf("\nServer settings:\n%s\n", strings.Join(settings, "\n"))
	return nil
}

// pgbenchPerRoundTrip runs pgbench -n -M prepared with a one-statement
// script (a warehouse's tax by a random key: one Bind/Execute/Sync round
// trip per transaction) on sledge's TPC-C database, as many clients as
// VUs on 2 threads, and returns its whole process's CPU per transaction.
func pgbenchPerRoundTrip(s *testdb.Server, dbname, vus, transport string, d time.Duration, dir string) (float64, error) {
	pgbench, err := exec.LookPath("pgbench")
	if err != nil {
		return 0, fmt.Errorf("pgbench not found")
	}
	script := filepath.Join(dir, "one-statement.sql")
	if err := os.WriteFile(script, []byte("\\set w random(1, "+vus+")\nSELECT w_tax FROM warehouse WHERE w_id = :w;\n"), 0o644); err != nil {
		return 0, err
	}
	host := s.Host
	if transport == "unix" {
		host = s.Socket
	}
	cmd := exec.Command(pgbench, "-n", "-M", "prepared", "-f", script, "-c", vus, "-j", "2", "-T", fmt.Sprintf("%.0f", d.Seconds()),
		"-h", host, "-p", fmt.Sprint(s.Port), "-U", s.User, dbname)
	cmd.Env = append(os.Environ(), "PGPASSWORD="+s.Password)
	out, err := cmd.Output()
	if err != nil {
		return 0, fmt.Errorf("pgbench: %v", err)
	}
	m := regexp.MustCompile(`(?m)^number of transactions actually processed: (\d+)`).FindSubmatch(out)
	if m == nil {
		return 0, fmt.Errorf("pgbench output not understood")
	}
	n, _ := strconv.ParseFloat(string(m[1]), 64)
	if n == 0 {
		return 0, fmt.Errorf("pgbench processed no transaction")
	}
	return child.CPUUs(cmd.ProcessState) / n, nil
}

func serverURL(s *testdb.Server, dbname, transport string) string {
	switch {
	case s.Kind == "postgres" && transport == "unix":
		return fmt.Sprintf("postgres://%s:%s@/%s?host=%s", s.User, s.Password, dbname, s.Socket)
	case s.Kind == "postgres":
		return fmt.Sprintf("postgres://%s:%s@%s:%d/%s", s.User, s.Password, s.Host, s.Port, dbname)
	case transport == "unix":
		return fmt.Sprintf("mysql://%s:%s@/%s?socket=%s", s.User, s.Password, dbname, s.Socket)
	default:
		return fmt.Sprintf("mysql://%s:%s@%s:%d/%s", s.User, s.Password, s.Host, s.Port, dbname)
	}
}
