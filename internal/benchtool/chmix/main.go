// Command chmix measures what CH-benCHmark's two sides cost each other
// (make bench-ch): for each database of -dbs, on a private throwaway
// server (or a SQLite/DuckDB file in a temp directory), `sledge build ch
// --warehouses W`, then `sledge compare ch` (the terminals alone, the
// analytic streams alone, both at once), and prints the interference
// table as Markdown. NOPM is the database's (Σ d_next_o_id), query times
// are sledge's client clock.
//
// Load goes only to 127.0.0.1 and to files in a temp directory.
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

	"github.com/sledge-bench/sledge/internal/benchtool/child"
	"github.com/sledge-bench/sledge/internal/runner"
	"github.com/sledge-bench/sledge/internal/testdb"
)

func main() {
	dbs := flag.String("dbs", "postgres,mariadb", "databases: postgres, mariadb, sqlite, duckdb")
	warehouses := flag.Int("warehouses", 4, "warehouses of the build")
	vus := flag.Int("vus", 4, "terminals")
	streams := flag.Int("streams", 1, "analytic streams")
	mode := flag.String("mode", "", "the terminals' mode (default: each database's default)")
	rampup := flag.Int("rampup", 10, "ramp-up seconds of each cell")
	duration := flag.Int("duration", 60, "measured seconds of each cell")
	flag.Parse()
	if err := bench(strings.Split(*dbs, ","), *warehouses, *vus, *streams, *mode, *rampup, *duration); err != nil {
		fmt.Fprintln(os.Stderr, "chmix:", err)
		os.Exit(1)
	}
}

func bench(dbs []string, warehouses, vus, streams int, mode string, rampup, duration int) error {
	ctx := context.Background()
	bin, dir, err := child.TempSledge("sledge-chmix-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	cmd := fmt.Sprintf("go run ./internal/benchtool/chmix -dbs %s -warehouses %d -vus %d -streams %d -rampup %d -duration %d",
		strings.Join(dbs, ","), warehouses, vus, streams, rampup, duration)
	if mode != "" {
		cmd += " -mode " + mode
	}
	var rows, groups []string // groups: one label per interference group, the query table's columns
	var queries [][]string
	for _, kind := range dbs {
		url, stop, err := open(ctx, dir, kind)
		if err != nil {
			return fmt.Errorf("%s: %w", kind, err)
		}
		fmt.Fprintf(os.Stderr, "%s: building ch with %d warehouses\n", kind, warehouses)
		if _, err := sledge(bin, "build", "ch", "--db", url, "--warehouses", strconv.Itoa(warehouses)); err != nil {
			stop()
			return fmt.Errorf("%s: %w", kind, err)
		}
		args := []string{"compare", "ch", "--db", url, "-c", strconv.Itoa(vus), "--analytic-streams", strconv.Itoa(streams),
			"--rampup", strconv.Itoa(rampup), "-T", strconv.Itoa(duration), "--seed", "1", "--json"}
		if mode != "" {
			args = append(args, "--mode", mode)
		}
		fmt.Fprintf(os.Stderr, "%s: compare ch, 3 cells of %d+%d s\n", kind, rampup, duration)
		out, err := sledge(bin, args...)
		stop()
		if err != nil {
			return fmt.Errorf("%s: %w", kind, err)
		}
		var c runner.CompareJSON
		if err := json.Unmarshal(out, &c); err != nil {
			return fmt.Errorf("%s: read compare ch --json: %w", kind, err)
		}
		for _, g := range c.Interference {
			rows = append(rows, fmt.Sprintf("| %s %s | %s | %d | %d | %s | %s | %s | %s | %s | %s |", c.Driver, c.DBVersion, g.Mode, g.VUs, g.Streams,
				num(g.NOPMAlone, "%.0f"), num(g.NOPMWithAnalytic, "%.0f"), num(g.NOPMRatio, "%.2f"),
				num(g.QphAlone, "%.0f"), num(g.QphWithTerminals, "%.0f"), num(g.QphRatio, "%.2f")))
			groups = append(groups, kind+" "+g.Mode)
			if len(queries) == 0 {
				for _, q := range g.Queries {
					queries = append(queries, []string{q.Query})
				}
			}
			for i, q := range g.Queries {
				if i < len(queries) {
					queries[i] = append(queries[i], num(q.AloneS, "%.3f"), num(q.WithTerminalsS, "%.3f"), num(q.SlowdownRatio, "%.2f"))
				}
			}
		}
	}
	fmt.Printf("`%s`\n\n", cmd)
	fmt.Println("| database | mode | terminals | streams | NOPM alone | NOPM with streams | ratio | queries/h alone | queries/h with terminals | ratio |")
	fmt.Println("|---|---|---|---|---|---|---|---|---|---|")
	for _, r := range rows {
		fmt.Println(r)
	}
	fmt.Println()
	head := "| query |"
	sep := "|---|"
	for _, g := range groups {
		head += fmt.Sprintf(" %s alone s | with terminals s | slowdown |", g)
		sep += "---|---|---|"
	}
	fmt.Println(head)
	fmt.Println(sep)
	for _, q := range queries {
		fmt.Println("| " + strings.Join(q, " | ") + " |")
	}
	return nil
}

func num(p *float64, format string) string {
	if p == nil {
		return "-"
	}
	return fmt.Sprintf(format, *p)
}

// open is the database of kind: a private server, or a file in dir; stop
// ends the server.
func open(ctx context.Context, dir, kind string) (url string, stop func(), err error) {
	switch kind {
	case "sqlite":
		return "sqlite://" + filepath.Join(dir, "ch.db"), func() {}, nil
	case "duckdb":
		return "duckdb://" + filepath.Join(dir, "ch.duckdb"), func() {}, nil
	case "postgres", "mariadb":
		var srv *testdb.Server
		if kind == "postgres" {
			srv, err = testdb.StartPostgres(ctx)
		} else {
			srv, err = testdb.StartMariaDB(ctx)
		}
		if err != nil {
			return "", nil, fmt.Errorf("start: %w", err)
		}
		scheme := map[string]string{"postgres": "postgres", "mariadb": "mysql"}[srv.Kind]
		url = fmt.Sprintf("%s://%s:%s@%s:%d/ch", scheme, srv.User, srv.Password, srv.Host, srv.Port)
		return url, func() { _ = srv.Stop() }, nil
	}
	return "", nil, fmt.Errorf("unknown database %q", kind)
}

// sledge runs the binary with args and returns its standard output; the
// error carries its standard error.
func sledge(bin string, args ...string) ([]byte, error) {
	cmd := exec.Command(bin, append(args, "--no-job")...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		return out.Bytes(), fmt.Errorf("sledge %s: %v: %s", args[0], err, strings.TrimSpace(errOut.String()))
	}
	return out.Bytes(), nil
}
