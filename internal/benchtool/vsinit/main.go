// Command vsinit measures `sledge pgbench -i` against pgbench -i itself
// (make bench-pgbench-init, issue 27), on one private PostgreSQL server:
// each scale of -scales, client-side (pgbench's default steps) and
// server-side (-I dtGvp), the two tools alternating which goes first in
// each round, on the same database. It reports each tool's median wall
// time (the process's start to its exit) and the median of pgbench's own
// "done in" figure, and sledge's time over pgbench's: below 1 is faster.
// The machine's load average (uptime) is printed before and after.
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/sledge-bench/sledge/internal/benchtool/child"
	"github.com/sledge-bench/sledge/internal/testdb"
)

func main() {
	scales := flag.String("scales", "1,10,50", "scale factors, in this order")
	rounds := flag.Int("rounds", 3, "rounds per tool, scale and mode; the order of the tools alternates")
	modes := flag.String("modes", "client,server", "client (pgbench's default steps dtgvp) and/or server (-I dtGvp)")
	flag.BoolVar(&show, "show", false, "print each run's \"done in\" line (each step's time)")
	flag.Parse()
	var ss []int
	for _, f := range strings.Split(*scales, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			fmt.Fprintf(os.Stderr, "vsinit: -scales: %q is not a scale factor\n", f)
			os.Exit(2)
		}
		ss = append(ss, n)
	}
	if err := run(ss, *rounds, strings.Split(*modes, ",")); err != nil {
		fmt.Fprintln(os.Stderr, "vsinit:", err)
		os.Exit(1)
	}
}

var show bool

func uptime() string {
	out, err := exec.Command("uptime").Output()
	if err != nil {
		return "uptime: " + err.Error()
	}
	return strings.TrimSpace(string(out))
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}

func run(scales []int, rounds int, modes []string) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	pgbench, err := child.Pgbench()
	if err != nil {
		return err
	}
	bin, dir, err := child.TempSledge("sledge-vsinit-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	srv, err := testdb.StartPostgres(context.Background())
	if err != nil {
		return fmt.Errorf("start postgres: %w", err)
	}
	defer srv.Stop()
	const dbname = "vsinit"
	admin, err := pgx.Connect(ctx, fmt.Sprintf("postgres://%s:%s@%s:%d/postgres", srv.User, srv.Password, srv.Host, srv.Port))
	if err != nil {
		return err
	}
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+dbname); err != nil {
		return err
	}
	var version string
	_ = admin.QueryRow(ctx, "SELECT current_setting('server_version')").Scan(&version)
	admin.Close(ctx)

	fmt.Printf("uptime before: %s\n", uptime())
	fmt.Printf("PostgreSQL %s over TCP on 127.0.0.1, %d rounds, tools alternating; times in seconds, medians\n", version, rounds)
	fmt.Printf("%-6s %-7s %12s %12s %14s %14s %8s\n", "scale", "mode", "pgbench", "sledge", "pgbench done", "sledge done", "ratio")
	env := append(os.Environ(), "PGPASSWORD="+srv.Password)
	doneRe := regexp.MustCompile(`(?m)^done in ([0-9.]+) s`)
	tools := []struct {
		name string
		prog []string
	}{{"pgbench", []string{pgbench}}, {"sledge", []string{bin, "pgbench", "--no-job"}}}
	for _, scale := range scales {
		for _, mode := range modes {
			args := []string{"-i", "-s", strconv.Itoa(scale), "-h", srv.Host, "-p", strconv.Itoa(srv.Port), "-U", srv.User}
			switch mode {
			case "client":
			case "server":
				args = append(args, "-I", "dtGvp")
			default:
				return fmt.Errorf("-modes: %q is neither client nor server", mode)
			}
			args = append(args, dbname)
			wall := map[string][]float64{}
			done := map[string][]float64{}
			for r := 0; r < rounds; r++ {
				for k := range tools {
					t := tools[(k+r)%2] // pgbench first in even rounds, sledge first in odd
					cmd := exec.CommandContext(ctx, t.prog[0], append(t.prog[1:len(t.prog):len(t.prog)], args...)...)
					cmd.Env = env
					var errb bytes.Buffer
					cmd.Stderr = &errb
					start := time.Now()
					if err := cmd.Run(); err != nil {
						return fmt.Errorf("%s %s: %v\n%s", t.name, strings.Join(args, " "), err, errb.String())
					}
					wall[t.name] = append(wall[t.name], time.Since(start).Seconds())
					m := doneRe.FindStringSubmatch(errb.String())
					if m == nil {
						return fmt.Errorf("%s printed no \"done in\" line:\n%s", t.name, errb.String())
					}
					if show {
						line := errb.String()[strings.LastIndex(errb.String(), "done in"):]
						fmt.Printf("  %s round %d: %s", t.name, r+1, line)
					}
					v, _ := strconv.ParseFloat(m[1], 64)
					done[t.name] = append(done[t.name], v)
				}
			}
			pw, sw := median(wall["pgbench"]), median(wall["sledge"])
			fmt.Printf("%-6d %-7s %12.2f %12.2f %14.2f %14.2f %8.2f\n", scale, mode, pw, sw,
				median(done["pgbench"]), median(done["sledge"]), sw/pw)
		}
	}
	fmt.Printf("uptime after: %s\n", uptime())
	return nil
}
