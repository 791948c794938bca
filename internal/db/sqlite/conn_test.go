package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sledge-bench/sledge/internal/workload"
)

func connect(t testing.TB, d *DB, m workload.Mode) workload.Conn {
	t.Helper()
	c, err := d.Connect(context.Background(), "kv", m)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := c.Close(context.Background()); err != nil {
			t.Error(err)
		}
	})
	return c
}

// TestModesSameResults runs one script of calls in each mode and requires
// identical results: the modes differ in how statements travel, never in
// what they do.
func TestModesSameResults(t *testing.T) {
	ctx := context.Background()
	ts := time.Date(2024, 3, 1, 12, 30, 0, 0, time.UTC)
	results := map[workload.Mode][]string{}
	runModes(t, func(t *testing.T, m workload.Mode) {
		d := openBuilt(t, "")
		c := connect(t, d, m)
		if c.Mode() != m {
			t.Fatalf("Mode = %v", c.Mode())
		}
		var out []string
		rec := func(v ...any) { out = append(out, fmt.Sprint(v...)) }
		for i := int64(1); i <= 5; i++ {
			n, err := c.Exec(ctx, "item.add", i, -i*7, float64(i)/4, fmt.Sprintf("it's %d", i), nil, ts.Add(time.Duration(i)*time.Second))
			if err != nil {
				t.Fatal(err)
			}
			rec("add ", n)
		}
		n, err := c.Exec(ctx, "item.set_s", int64(2), "two -- not a comment ?1")
		if err != nil {
			t.Fatal(err)
		}
		rec("set ", n)
		var (
			i     int64
			f     float64
			s     string
			nn    any
			stamp any
		)
		if err := c.QueryRow(ctx, "item.get", int64(2)).Scan(&i, &f, &s, &nn, &stamp); err != nil {
			t.Fatal(err)
		}
		rec("get ", i, " ", f, " ", s, " ", nn, " ", stamp)
		var raw string
		if err := c.QueryRow(ctx, "item.raw", int64(3)).Scan(&raw); err != nil {
			t.Fatal(err)
		}
		rec("raw ", raw)
		rs, err := c.Query(ctx, "item.range", int64(2), int64(4))
		if err != nil {
			t.Fatal(err)
		}
		for rs.Next() {
			var id int64
			var ts string
			if err := rs.Scan(&id, &i, &f, &s, &nn, &ts); err != nil {
				t.Fatal(err)
			}
			rec("row ", id, " ", i, " ", f, " ", s, " ", nn, " ", ts)
		}
		if err := rs.Err(); err != nil {
			t.Fatal(err)
		}
		if err := rs.Close(); err != nil {
			t.Fatal(err)
		}
		results[m] = out
	})
	want := []string{
		"add 1", "add 1", "add 1", "add 1", "add 1", "set 1",
		"get -14 0.5 two -- not a comment ?1 <nil> 2024-03-01 12:30:02",
		"raw -21,0.75,'it''s 3',NULL,'2024-03-01 12:30:03'",
		"row 2 -14 0.5 two -- not a comment ?1 <nil> 2024-03-01 12:30:02",
		"row 3 -21 0.75 it's 3 <nil> 2024-03-01 12:30:03",
		"row 4 -28 1 it's 4 <nil> 2024-03-01 12:30:04",
	}
	for m, got := range results {
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%v:\n got %q\nwant %q", m, got, want)
		}
	}
}

func TestErrorMapping(t *testing.T) {
	ctx := context.Background()
	runModes(t, func(t *testing.T, m workload.Mode) {
		t.Run("no schema", func(t *testing.T) {
			d := openTest(t, "")
			c := connect(t, d, m)
			var n int64
			err := c.QueryRow(ctx, "item.count").Scan(&n)
			if !errors.Is(err, workload.ErrNoSchema) || !strings.Contains(err.Error(), "no such table: item") {
				t.Fatalf("QueryRow err = %v, want ErrNoSchema", err)
			}
			if _, err := c.Exec(ctx, "item.set_s", int64(1), "x"); !errors.Is(err, workload.ErrNoSchema) {
				t.Fatalf("Exec err = %v, want ErrNoSchema", err)
			}
			if _, err := c.Query(ctx, "item.range", int64(1), int64(2)); !errors.Is(err, workload.ErrNoSchema) {
				t.Fatalf("Query err = %v, want ErrNoSchema", err)
			}
		})
		d := openBuilt(t, "")
		c := connect(t, d, m)
		t.Run("no rows", func(t *testing.T) {
			var i int64
			var f float64
			var s, n, ts any
			err := c.QueryRow(ctx, "item.get", int64(42)).Scan(&i, &f, &s, &n, &ts)
			if !errors.Is(err, workload.ErrNoRows) || !errors.Is(err, sql.ErrNoRows) {
				t.Fatalf("err = %v, want ErrNoRows and sql.ErrNoRows", err)
			}
			if err.Error() != "sqlite: query item.get: sql: no rows in result set" {
				t.Fatalf("message = %q", err)
			}
		})
		t.Run("unknown statement", func(t *testing.T) {
			want := `sqlite: no statement "nope" for workload kv`
			if _, err := c.Exec(ctx, "nope"); errString(err) != want {
				t.Errorf("Exec err = %v", err)
			}
			if err := c.QueryRow(ctx, "nope").Scan(); errString(err) != want {
				t.Errorf("QueryRow err = %v", err)
			}
			if _, err := c.Query(ctx, "nope"); errString(err) != want {
				t.Errorf("Query err = %v", err)
			}
		})
		t.Run("wrong argument count", func(t *testing.T) {
			if _, err := c.Exec(ctx, "item.set_s", int64(1)); err == nil {
				t.Fatal("no error")
			}
		})
		t.Run("constraint is not retryable", func(t *testing.T) {
			if _, err := c.Exec(ctx, "item.add", int64(1), nil, nil, nil, nil, nil); err != nil {
				t.Fatal(err)
			}
			_, err := c.Exec(ctx, "item.add", int64(1), nil, nil, nil, nil, nil)
			if err == nil || errors.Is(err, workload.ErrRetry) || errors.Is(err, workload.ErrNoSchema) {
				t.Fatalf("err = %v", err)
			}
		})
	})
}

// TestBusyIsRetry holds the write lock from a connection outside the DB (as
// another process would) with a 1ms busy_timeout, so SQLITE_BUSY reaches
// the session: it must wrap ErrRetry.
func TestBusyIsRetry(t *testing.T) {
	ctx := context.Background()
	runModes(t, func(t *testing.T, m workload.Mode) {
		d := openBuilt(t, "busy_timeout=1")
		hold := sql.OpenDB(newConnector(d.path, d.set))
		defer hold.Close()
		hc, err := hold.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer hc.Close()
		if _, err := hc.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
			t.Fatal(err)
		}
		defer hc.ExecContext(ctx, "ROLLBACK")

		c := connect(t, d, m)
		_, err = c.Exec(ctx, "counter.set", int64(1))
		if !errors.Is(err, workload.ErrRetry) || !strings.Contains(err.Error(), "locked") {
			t.Fatalf("Exec err = %v, want ErrRetry", err)
		}
		err = c.InTx(ctx, workload.TxOptions{}, func(ctx context.Context) error { return nil })
		if !errors.Is(err, workload.ErrRetry) || !strings.HasPrefix(err.Error(), "sqlite: begin: ") {
			t.Fatalf("InTx err = %v, want ErrRetry from begin", err)
		}
		// Readers are not blocked by a writer in WAL mode.
		err = c.InTx(ctx, workload.TxOptions{ReadOnly: true}, func(ctx context.Context) error {
			var n int64
			return c.QueryRow(ctx, "counter.get").Scan(&n)
		})
		if err != nil {
			t.Fatalf("read-only InTx: %v", err)
		}
	})
}

func TestInTx(t *testing.T) {
	ctx := context.Background()
	errBoom := errors.New("boom")
	runModes(t, func(t *testing.T, m workload.Mode) {
		d := openBuilt(t, "")
		c := connect(t, d, m)
		get := func() int64 {
			t.Helper()
			var n int64
			if err := c.QueryRow(ctx, "counter.get").Scan(&n); err != nil {
				t.Fatal(err)
			}
			return n
		}
		tests := []struct {
			name    string
			opts    workload.TxOptions
			fnErr   error
			want    int64
			wantErr error
		}{
			{name: "commit", want: 10},
			{name: "rollback", fnErr: errBoom, want: 10, wantErr: errBoom},
			{name: "user abort", fnErr: fmt.Errorf("neword: item: %w", workload.ErrUserAbort), want: 10, wantErr: workload.ErrUserAbort},
			{name: "read only sees committed", opts: workload.TxOptions{ReadOnly: true}, want: 10},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				err := c.InTx(ctx, tt.opts, func(ctx context.Context) error {
					if !tt.opts.ReadOnly {
						if _, err := c.Exec(ctx, "counter.set", int64(10)); err != nil {
							return err
						}
						if tt.fnErr == nil {
							return nil
						}
						if _, err := c.Exec(ctx, "counter.set", int64(99)); err != nil {
							return err
						}
					}
					return tt.fnErr
				})
				if !errors.Is(err, tt.wantErr) || (tt.wantErr == nil) != (err == nil) {
					t.Fatalf("err = %v, want %v", err, tt.wantErr)
				}
				if got := get(); got != tt.want {
					t.Fatalf("counter = %d, want %d", got, tt.want)
				}
			})
		}
		t.Run("nested", func(t *testing.T) {
			err := c.InTx(ctx, workload.TxOptions{}, func(ctx context.Context) error {
				return c.InTx(ctx, workload.TxOptions{}, func(context.Context) error { return nil })
			})
			if err == nil || !strings.Contains(err.Error(), "inside a transaction") {
				t.Fatalf("err = %v", err)
			}
		})
		t.Run("cancelled mid-way releases the lock", func(t *testing.T) {
			cctx, cancel := context.WithCancel(ctx)
			err := c.InTx(cctx, workload.TxOptions{}, func(ctx context.Context) error {
				if _, err := c.Exec(ctx, "counter.set", int64(77)); err != nil {
					return err
				}
				cancel()
				_, err := c.Exec(ctx, "counter.set", int64(78))
				return err
			})
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("err = %v, want context.Canceled", err)
			}
			// Another session can write at once: the lock was released.
			c2 := connect(t, d, m)
			tctx, cancel2 := context.WithTimeout(ctx, 5*time.Second)
			defer cancel2()
			if err := c2.InTx(tctx, workload.TxOptions{}, func(ctx context.Context) error {
				_, err := c2.Exec(ctx, "counter.set", int64(11))
				return err
			}); err != nil {
				t.Fatal(err)
			}
			if got := get(); got != 11 {
				t.Fatalf("counter = %d, want 11", got)
			}
		})
	})
}

// TestConcurrentCounter is the "SQLITE_BUSY never surfaces" guarantee: many
// sessions doing read-modify-write transactions on one row all succeed, and
// none is lost.
func TestConcurrentCounter(t *testing.T) {
	const conns, txns = 8, 200
	ctx := context.Background()
	runModes(t, func(t *testing.T, m workload.Mode) {
		d := openBuilt(t, "")
		var wg sync.WaitGroup
		errs := make(chan error, conns)
		for range conns {
			c := connect(t, d, m)
			wg.Go(func() {
				for range txns {
					err := c.InTx(ctx, workload.TxOptions{}, func(ctx context.Context) error {
						var n int64
						if err := c.QueryRow(ctx, "counter.get").Scan(&n); err != nil {
							return err
						}
						_, err := c.Exec(ctx, "counter.set", n+1)
						return err
					})
					if err != nil {
						errs <- err
						return
					}
				}
			})
		}
		// Readers run alongside and never fail either.
		r := connect(t, d, m)
		stop := make(chan struct{})
		var readErr error
		var rwg sync.WaitGroup
		rwg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				readErr = r.InTx(ctx, workload.TxOptions{ReadOnly: true}, func(ctx context.Context) error {
					var n int64
					return r.QueryRow(ctx, "counter.get").Scan(&n)
				})
				if readErr != nil {
					return
				}
			}
		})
		wg.Wait()
		close(stop)
		rwg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
		if readErr != nil {
			t.Error(readErr)
		}
		var n int64
		if err := r.QueryRow(ctx, "counter.get").Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n != conns*txns {
			t.Fatalf("counter = %d, want %d", n, conns*txns)
		}
	})
}
