// Command tpmagree measures how well the database's TPM agrees with the
// transactions sledge's virtual users ended (make bench-tpm): on private
// throwaway PostgreSQL and MariaDB servers, every mode of tpcc and tpcb runs
// -rounds times for -duration, in turn (round 1 of every mode, then round 2…),
// and for each server and mode it prints the spread of the ratio
// database TPM ÷ client TPM and how many runs were outside ±2%.
//
// -sledge runs another sledge binary (an older build, for a before/after
// figure); its --json must have tpm, tpm_source and tpm_client. Network load
// goes only to 127.0.0.1.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/sledge-bench/sledge/internal/benchtool/child"
	"github.com/sledge-bench/sledge/internal/testdb"
)

func main() {
	dbs := flag.String("dbs", "postgres,mariadb", "servers to measure")
	rounds := flag.Int("rounds", 20, "runs per server and mode")
	vus := flag.Int("vus", 2, "virtual users")
	rampup := flag.Duration("rampup", time.Second, "ramp-up per run (tpcc; tpcb runs without)")
	duration := flag.Duration("duration", 8*time.Second, "measured interval per run")
	bin := flag.String("sledge", "", "sledge binary to measure (default: build ./cmd/sledge)")
	flag.Parse()
	if err := run(*dbs, *rounds, *vus, *rampup, *duration, *bin); err != nil {
		fmt.Fprintln(os.Stderr, "tpmagree:", err)
		os.Exit(1)
	}
}

type summary struct {
	TPM         float64  `json:"tpm"`
	TPMSource   string   `json:"tpm_source"`
	TPMClient   float64  `json:"tpm_client"`
	TPMDatabase *float64 `json:"tpm_database"`
	TPMNote     string   `json:"tpm_note"`
}

// ratio is the database's TPM over the client's, from either version's JSON.
func (s summary) ratio() (float64, bool) {
	db := s.TPMDatabase
	if db == nil && s.TPMSource == "database" {
		db = &s.TPM
	}
	if db == nil || s.TPMClient == 0 {
		return 0, false
	}
	return *db / s.TPMClient, true
}

type config struct{ workload, mode string }

func run(dbs string, rounds, vus int, rampup, duration time.Duration, bin string) error {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "sledge-tpmagree-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	if bin == "" {
		bin = filepath.Join(dir, "sledge")
		if err := child.BuildSledge(bin); err != nil {
			return err
		}
	}
	var configs []config
	for _, w := range []string{"tpcc", "tpcb"} {
		for _, m := range []string{"procedure", "client", "prepared"} {
			configs = append(configs, config{w, m})
		}
	}
	fmt.Printf("%d runs of %s per server and mode, %d VUs, tpcc after %s of ramp-up\n\n", rounds, duration, vus, rampup)
	fmt.Println("| server | workload | mode | runs | database ÷ client TPM: min | median | max | outside ±2% | headline from the database |")
	fmt.Println("|---|---|---|---|---|---|---|---|---|")
	for _, kind := range strings.Split(dbs, ",") {
		var srv *testdb.Server
		scheme := "postgres"
		switch kind {
		case "postgres":
			srv, err = testdb.StartPostgres(ctx)
		case "mariadb":
			srv, err = testdb.StartMariaDB(ctx)
			scheme = "mysql"
		default:
			return fmt.Errorf("unknown server %q", kind)
		}
		if err != nil {
			return err
		}
		u := fmt.Sprintf("%s://%s:%s@%s:%d/tpmagree", scheme, srv.User, srv.Password, srv.Host, srv.Port)
		err = measure(bin, kind, u, configs, rounds, vus, rampup, duration)
		if serr := srv.Stop(); err == nil {
			err = serr
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func measure(bin, kind, u string, configs []config, rounds, vus int, rampup, duration time.Duration) error {
	for _, b := range [][]string{{"build", "tpcc", "--warehouses", fmt.Sprint(vus)}, {"build", "tpcb", "--scale", fmt.Sprint(vus)}} {
		if _, err := sledge(bin, append(b, "--db", u, "--no-job")...); err != nil {
			return err
		}
	}
	ratios := make([][]float64, len(configs))
	headline := make([]int, len(configs))
	for r := 0; r < rounds; r++ {
		for i, c := range configs {
			args := []string{"run", c.workload, "--db", u, "--mode", c.mode, "-c", fmt.Sprint(vus),
				"-T", duration.String(), "--json", "--no-job"}
			if c.workload == "tpcc" {
				args = append(args, "--rampup", fmt.Sprint(rampup.Seconds()))
			}
			out, err := sledge(bin, args...)
			if err != nil {
				return err
			}
			var s summary
			if err := json.Unmarshal(out, &s); err != nil {
				return fmt.Errorf("%s %s: %v", c.workload, c.mode, err)
			}
			if x, ok := s.ratio(); ok {
				ratios[i] = append(ratios[i], x)
			}
			if s.TPMSource == "database" {
				headline[i]++
			}
			if s.TPMNote != "" {
				fmt.Fprintf(os.Stderr, "%s %s %s round %d: %s\n", kind, c.workload, c.mode, r+1, s.TPMNote)
			}
		}
	}
	for i, c := range configs {
		x := ratios[i]
		if len(x) == 0 {
			fmt.Printf("| %s | %s | %s | %d | - | - | - | - | %d |\n", kind, c.workload, c.mode, rounds, headline[i])
			continue
		}
		slices.Sort(x)
		out := 0
		for _, v := range x {
			if math.Abs(v-1) > 0.02 {
				out++
			}
		}
		fmt.Printf("| %s | %s | %s | %d | %.4f | %.4f | %.4f | %d | %d |\n", kind, c.workload, c.mode, len(x), x[0], x[len(x)/2], x[len(x)-1], out, headline[i])
	}
	return nil
}

func sledge(bin string, args ...string) ([]byte, error) {
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("sledge %s: %v: %s", strings.Join(args, " "), err, stderr.String())
	}
	return stdout.Bytes(), nil
}
