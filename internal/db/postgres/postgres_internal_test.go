package postgres

import (
	"bytes"
	"errors"
	"io"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sledge-bench/sledge/internal/db"
	"github.com/sledge-bench/sledge/internal/workload"
	"github.com/sledge-bench/sledge/internal/workload/tpcc"
)

// Every statement the workload names in any mode is defined, and nothing
// else but the CALL texts of routines=procedures.
func TestStatementsMatchWorkload(t *testing.T) {
	named, err := db.SQLFiles{FS: sqlFS}.Named("tpcc")
	if err != nil {
		t.Fatal(err)
	}
	w := tpcc.New(tpcc.Config{Warehouses: 1})
	want := map[string]bool{}
	for _, m := range []workload.Mode{workload.ModeProcedure, workload.ModeClient, workload.ModePrepared, workload.ModeBatched} {
		for _, s := range w.Statements(m) {
			want[s] = true
		}
	}
	for _, r := range routineNames {
		want[r+".call_procedure"] = true
	}
	var missing, extra []string
	for s := range want {
		if _, ok := named[s]; !ok {
			missing = append(missing, s)
		}
	}
	for s := range named {
		if !want[s] {
			extra = append(extra, s)
		}
	}
	sort.Strings(missing)
	sort.Strings(extra)
	if len(missing) > 0 || len(extra) > 0 {
		t.Errorf("statements.sql/checks.sql: missing %v, unknown %v", missing, extra)
	}
	for _, name := range []string{"tables", "indexes", "procedures", "drop"} {
		stmts, ok, err := db.SQLFiles{FS: sqlFS}.Script("tpcc", name)
		if err != nil || !ok || len(stmts) == 0 {
			t.Errorf("%s.sql: ok=%v err=%v statements=%d", name, ok, err, len(stmts))
		}
	}
}

func TestParseURL(t *testing.T) {
	tests := []struct {
		url       string
		routines  Routines
		transport string
		timeout   time.Duration
		wantErr   string
	}{
		{url: "postgres://u:p@127.0.0.1:5432/tpcc", routines: Functions, transport: "tcp", timeout: 5 * time.Second},
		{url: "postgresql://u@/tpcc?host=/run/postgresql&routines=procedures", routines: Procedures, transport: "unix", timeout: 5 * time.Second},
		{url: "postgres://u@db:5433/tpcc?routines=FUNCTIONS&connect_timeout=2", routines: Functions, transport: "tcp", timeout: 2 * time.Second},
		{url: "postgres://u@db/tpcc?routines=both", wantErr: "bad value \"both\" for routines: use functions or procedures"},
	}
	for _, tt := range tests {
		t.Run(tt.url, func(t *testing.T) {
			u, err := url.Parse(tt.url)
			if err != nil {
				t.Fatal(err)
			}
			cfg, r, err := parseURL(u)
			if tt.wantErr != "" {
				if err == nil || !bytes.Contains([]byte(err.Error()), []byte(tt.wantErr)) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			d := &DB{cfg: cfg, routines: r}
			if r != tt.routines || d.transport() != tt.transport || cfg.ConnectTimeout != tt.timeout {
				t.Errorf("routines %v transport %s timeout %v; want %v %s %v", r, d.transport(), cfg.ConnectTimeout, tt.routines, tt.transport, tt.timeout)
			}
			if _, ok := cfg.RuntimeParams["routines"]; ok {
				t.Error("routines= reached pgx's runtime parameters")
			}
		})
	}
}

func TestAppendCopyText(t *testing.T) {
	var b bytes.Buffer
	ts := time.Date(2024, 5, 6, 7, 8, 9, 0, time.UTC)
	rows := [][]any{
		{int64(1), 12.5, "a\tb\\c\nd", nil, ts},
		{int64(-2), 0.01, "", nil, ts},
	}
	if err := appendCopyText(&b, rows, 5, false); err != nil {
		t.Fatal(err)
	}
	want := "1\t12.50\ta\\tb\\\\c\\nd\t\\N\t2024-05-06 07:08:09Z\n-2\t0.01\t\t\\N\t2024-05-06 07:08:09Z\n"
	if b.String() != want {
		t.Errorf("got %q\nwant %q", b.String(), want)
	}
	if err := appendCopyText(&b, [][]any{{struct{}{}}}, 1, false); err == nil {
		t.Error("unsupported type accepted")
	}
	if err := appendCopyText(&b, [][]any{{int64(1)}}, 2, false); err == nil {
		t.Error("short row accepted")
	}
}

// plainCopy's 8-bytes-at-a-time test agrees with the byte-by-byte one for
// every byte value at every position of strings of 1 to 20 bytes.
func TestPlainCopy(t *testing.T) {
	slow := func(s string) bool {
		for i := 0; i < len(s); i++ {
			if s[i] < ' ' || s[i] == '\\' {
				return false
			}
		}
		return true
	}
	for n := 1; n <= 20; n++ {
		for pos := 0; pos < n; pos++ {
			for c := 0; c < 256; c++ {
				b := []byte(strings.Repeat("a", n))
				b[pos] = byte(c)
				if s := string(b); plainCopy(s) != slow(s) {
					t.Fatalf("plainCopy(%q) = %v", s, plainCopy(s))
				}
			}
		}
	}
}

// appendFloat reads back as the value it wrote: money as its exact two
// places, anything else in strconv's shortest form.
func TestAppendFloat(t *testing.T) {
	for _, c := range []struct {
		x    float64
		want string
	}{
		{12.5, "12.50"}, {0.01, "0.01"}, {-999.99, "-999.99"}, {5, "5.00"}, {0, "0.00"},
		{9999999999999.99, "9999999999999.99"}, {0.125, "0.125"}, {1e300, strconv.FormatFloat(1e300, 'f', -1, 64)},
		{-0.5, "-0.50"}, {1.0 / 3, strconv.FormatFloat(1.0/3, 'f', -1, 64)},
	} {
		got := string(appendFloat(nil, c.x))
		if got != c.want {
			t.Errorf("appendFloat(%v) = %q, want %q", c.x, got, c.want)
		}
		if back, err := strconv.ParseFloat(got, 64); err != nil || back != c.x {
			t.Errorf("%q reads back as %v, not %v", got, back, c.x)
		}
	}
	for cents := int64(-100000); cents <= 100000; cents++ {
		x := float64(cents) / 100
		if back, _ := strconv.ParseFloat(string(appendFloat(nil, x)), 64); back != x {
			t.Fatalf("cents %d: %q reads back as %v", cents, appendFloat(nil, x), back)
		}
	}
}

// copyReader writes the rows of every batch next gives, in order, whatever
// the size of the reads, and fails with next's error.
func TestCopyReader(t *testing.T) {
	batches := [][][]any{{{int64(1), "a"}, {int64(2), "b\tc"}}, {{int64(3), 1.5}}, {{int64(4), nil}, {int64(5), "long row " + strings.Repeat("x", 100)}}}
	var want bytes.Buffer
	for _, b := range batches {
		if err := appendCopyText(&want, b, 2, false); err != nil {
			t.Fatal(err)
		}
	}
	tab := &workload.Table{Name: "t", Columns: []string{"a", "b"}}
	for _, size := range []int{1, 3, 7, 64, 4096} {
		k := 0
		r := &copyReader{t: tab, next: func() ([][]any, error) {
			if k == len(batches) {
				return nil, nil
			}
			k++
			return batches[k-1], nil
		}}
		var got bytes.Buffer
		p := make([]byte, size)
		for {
			n, err := r.Read(p)
			got.Write(p[:n])
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		if got.String() != want.String() {
			t.Errorf("reads of %d: got %q\nwant %q", size, got.String(), want.String())
		}
	}
	boom := errors.New("cancelled")
	r := &copyReader{t: tab, next: func() ([][]any, error) { return nil, boom }}
	if _, err := r.Read(make([]byte, 10)); !errors.Is(err, boom) {
		t.Errorf("next's error: %v", err)
	}
}
