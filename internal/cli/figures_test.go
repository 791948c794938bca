package cli

import (
	"database/sql"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/sledge-bench/sledge/internal/db/sqlite"
)

var (
	twoWHOnce   sync.Once
	twoWHPath   string
	twoWHOut    string // what the build printed on stdout
	twoWHStderr string // and on stderr
	twoWHErr    string
)

// twoWarehouseDB returns a fresh copy of a two-warehouse TPC-C SQLite
// database built once per test binary, and what its build printed.
func twoWarehouseDB(t *testing.T) (path, stdout, stderr string) {
	t.Helper()
	twoWHOnce.Do(func() {
		dir, err := os.MkdirTemp("", "sledge-cli-test-2wh-")
		if err != nil {
			twoWHErr = err.Error()
			return
		}
		twoWHPath = filepath.Join(dir, "tpcc.db")
		var code int
		twoWHOut, twoWHStderr, code = runCLI(t, dir, "build", "--db", "sqlite://"+twoWHPath, "--warehouses", "2", "--no-job")
		if code != 0 {
			twoWHErr = twoWHStderr
		}
	})
	if twoWHErr != "" {
		t.Fatalf("build failed: %s", twoWHErr)
	}
	dst := filepath.Join(t.TempDir(), "tpcc.db")
	copyFile(t, twoWHPath, dst)
	return dst, twoWHOut, twoWHStderr
}

// tableRows is the sum of the row counts of every table in an SQLite file.
func tableRows(t *testing.T, path string) int64 {
	t.Helper()
	d, err := sql.Open(sqlite.SQLDriverName, path)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	rows, err := d.Query("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			t.Fatal(err)
		}
		names = append(names, n)
	}
	rows.Close()
	var sum int64
	for _, n := range names {
		var c int64
		if err := d.QueryRow(`SELECT count(*) FROM "` + n + `"`).Scan(&c); err != nil {
			t.Fatal(err)
		}
		sum += c
	}
	return sum
}

func number(t *testing.T, s string) int64 {
	t.Helper()
	n, err := strconv.ParseInt(strings.ReplaceAll(s, ",", ""), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// A build prints one row total, on its progress line and its last line,
// and it is the number of rows in the database (tpcc and tpcb).
func TestBuildPrintsOneRowTotal(t *testing.T) {
	path, stdout, stderr := twoWarehouseDB(t)
	tpcb := filepath.Join(t.TempDir(), "tpcb.db")
	bOut, bErr, code := runCLI(t, t.TempDir(), "build", "tpcb", "--db", "sqlite://"+tpcb, "--no-job")
	if code != 0 {
		t.Fatalf("build tpcb: exit %d: %s", code, bErr)
	}
	jsonPath := filepath.Join(t.TempDir(), "tpcb.db")
	jOut, jErr, code := runCLI(t, t.TempDir(), "build", "tpcb", "--db", "sqlite://"+jsonPath, "--no-job", "--json")
	if code != 0 {
		t.Fatalf("build tpcb --json: exit %d: %s", code, jErr)
	}
	final := regexp.MustCompile(`, ([\d,]+) rows in `)
	partial := regexp.MustCompile(`loaded ([\d,]+) of ([\d,]+) rows in .*, then loading (\w+) \(([\d,]+) rows\)`)
	for _, c := range []struct {
		name, path, stdout, stderr string
	}{{"tpcc", path, stdout, stderr}, {"tpcb", tpcb, bOut, bErr}} {
		t.Run(c.name, func(t *testing.T) {
			inDB := tableRows(t, c.path)
			m := final.FindStringSubmatch(c.stdout)
			if m == nil {
				t.Fatalf("no row total on the last line: %q", c.stdout)
			}
			if got := number(t, m[1]); got != inDB {
				t.Errorf("build says %d rows, the database has %d", got, inDB)
			}
			p := partial.FindStringSubmatch(c.stderr)
			if p == nil {
				t.Fatalf("no progress line with the total: %q", c.stderr)
			}
			if got := number(t, p[2]); got != inDB {
				t.Errorf("progress line says %d rows in all, the database has %d:\n%s", got, inDB, c.stderr)
			}
			if number(t, p[1])+number(t, p[4]) != inDB {
				t.Errorf("progress line: %s + %s (%s) is not the %d rows loaded", p[1], p[4], p[3], inDB)
			}
		})
	}
	var res buildResult
	if err := json.Unmarshal([]byte(jOut), &res); err != nil {
		t.Fatal(err)
	}
	if inDB := tableRows(t, jsonPath); res.Rows != inDB {
		t.Errorf("--json rows %d, the database has %d", res.Rows, inDB)
	}
}

// A run says which home warehouses its VUs use, in the header, the
// summary and --json, and mentions --all-warehouses when it would change
// them.
func TestRunSaysWhichWarehouses(t *testing.T) {
	path, _, _ := twoWarehouseDB(t)
	cases := []struct {
		name  string
		args  []string
		homes []int
		text  string
	}{
		{"1 VU", []string{"-c", "1"}, []int{1}, "1 VU on home warehouse 1 of 2; --all-warehouses spreads them over all 2"},
		{"1 VU, all warehouses", []string{"-c", "1", "--all-warehouses"}, []int{1, 2}, "1 VU spread over all 2 warehouses (--all-warehouses"},
		{"3 VUs", []string{"-c", "3"}, []int{1, 2}, "3 VUs on home warehouses 1–2 of 2"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			args := append([]string{"run", "--db", "sqlite://" + path, "-t", "5", "--no-job"}, c.args...)
			stdout, stderr, code := runCLI(t, t.TempDir(), args...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			if !strings.Contains(stderr, c.text) || !strings.Contains(stdout, c.text) {
				t.Errorf("header or summary lacks %q:\n%s\n%s", c.text, stderr, stdout)
			}
			if strings.Contains(c.text, "1–2 of 2") && strings.Contains(stdout, "--all-warehouses") {
				t.Errorf("--all-warehouses mentioned where it changes nothing:\n%s", stdout)
			}
			stdout, stderr, code = runCLI(t, t.TempDir(), append(args, "--json")...)
			if code != 0 {
				t.Fatalf("--json: exit %d: %s", code, stderr)
			}
			var out struct {
				Warehouses *int  `json:"warehouses"`
				Homes      []int `json:"home_warehouses"`
			}
			if err := json.Unmarshal([]byte(stdout), &out); err != nil {
				t.Fatal(err)
			}
			if out.Warehouses == nil || *out.Warehouses != 2 || !reflect.DeepEqual(out.Homes, c.homes) {
				t.Errorf("--json: warehouses %v, home_warehouses %v; want 2, %v", out.Warehouses, out.Homes, c.homes)
			}
		})
	}
}

// -R and -L: the TPC-C text summary says what they did, as the tpcb and
// script summaries do; without them it says nothing of it.
func TestTPCCSummaryShowsRateAndLatencyLimit(t *testing.T) {
	path := builtDB(t)
	cases := []struct {
		name    string
		args    []string
		want    []string
		notWant []string
	}{
		{"-R and -L", []string{"-R", "400", "-L", "0.5"}, []string{"rate limit: 400 transactions per second in all (-R)",
			"number of transactions skipped: ", "number of transactions above the 0.5 ms latency limit: ", "rate limit schedule lag: avg "}, nil},
		{"-L", []string{"-L", "1000"}, []string{"number of transactions above the 1000.0 ms latency limit: "},
			[]string{"skipped", "rate limit"}},
		{"-R", []string{"--rate", "400"}, []string{"rate limit: 400 transactions per second", "rate limit schedule lag: avg "},
			[]string{"skipped", "latency limit"}},
		{"neither", nil, nil, []string{"skipped", "latency limit", "rate limit"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			home := t.TempDir()
			args := append([]string{"run", "--db", "sqlite://" + path, "-c", "2", "-t", "20"}, c.args...)
			stdout, stderr, code := runCLI(t, home, args...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			// jobs show prints the same summary from the job store.
			shown, _, _ := runCLI(t, home, "jobs", "show", "1")
			for _, l := range strings.Split(stdout, "\n") {
				if strings.Contains(l, "limit") || strings.Contains(l, "skipped") {
					if !strings.Contains(shown, l) {
						t.Errorf("jobs show lacks %q:\n%s", l, shown)
					}
				}
			}
			for _, w := range c.want {
				if !strings.Contains(stdout, w) {
					t.Errorf("summary lacks %q:\n%s", w, stdout)
				}
			}
			for _, w := range c.notWant {
				if strings.Contains(stdout, w) {
					t.Errorf("summary has %q:\n%s", w, stdout)
				}
			}
			if c.name == "-L" {
				// Late of the transactions processed: every one of them.
				m := regexp.MustCompile(`latency limit: (\d+)/(\d+)`).FindStringSubmatch(stdout)
				if m == nil || number(t, m[2]) != 40 {
					t.Errorf("late line does not count the 40 transactions: %s", stdout)
				}
			}
		})
	}
}
