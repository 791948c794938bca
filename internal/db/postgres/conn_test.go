package postgres_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/sledge-bench/sledge/internal/db"
	"github.com/sledge-bench/sledge/internal/workload"
)

func open(t *testing.T, u string) db.DB {
	t.Helper()
	d, err := db.Open(context.Background(), u)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Close() })
	return d
}

func connect(t *testing.T, d db.DB, m workload.Mode) workload.Conn {
	t.Helper()
	ctx := context.Background()
	c, err := d.Connect(ctx, "tpcc", m)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close(ctx) })
	return c
}

// A real deadlock between two sessions comes back as ErrRetry, with
// PostgreSQL's error still reachable.
func TestDeadlockIsRetry(t *testing.T) {
	s := server(t)
	runModes(t, func(t *testing.T, m workload.Mode) {
		d := open(t, tcpURL(s, freshDB(t)))
		a, b := connect(t, d, m), connect(t, d, m)
		ctx := context.Background()
		var wg sync.WaitGroup
		var first sync.WaitGroup
		first.Add(2)
		errs := make([]error, 2)
		for i, c := range []workload.Conn{a, b} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				mine, other := int64(1+i), int64(2-i)
				errs[i] = c.InTx(ctx, workload.TxOptions{}, func(ctx context.Context) error {
					if _, err := c.Exec(ctx, "payment.district_update", 1.0, int64(1), mine); err != nil {
						first.Done()
						return err
					}
					first.Done()
					first.Wait()
					_, err := c.Exec(ctx, "payment.district_update", 1.0, int64(1), other)
					return err
				})
			}()
		}
		wg.Wait()
		retries := 0
		for _, err := range errs {
			if err == nil {
				continue
			}
			var pe *pgconn.PgError
			if !errors.Is(err, workload.ErrRetry) || !errors.As(err, &pe) || pe.Code != "40P01" {
				t.Errorf("error %v is not a retryable deadlock", err)
			}
			retries++
		}
		if retries != 1 {
			t.Errorf("%d sessions failed, want exactly 1: %v", retries, errs)
		}
		// Both sessions are usable afterwards.
		for _, c := range []workload.Conn{a, b} {
			var n int64
			if err := c.QueryRow(ctx, "tpcc.nopm").Scan(&n); err != nil {
				t.Error(err)
			}
		}
	})
}

// A serialization failure under REPEATABLE READ is ErrRetry too.
func TestSerializationFailureIsRetry(t *testing.T) {
	s := server(t)
	name := freshDB(t)
	// The Conn API has no isolation option: make it the database default.
	admin(t, "ALTER DATABASE "+name+" SET default_transaction_isolation = 'repeatable read'")
	runModes(t, func(t *testing.T, m workload.Mode) {
		d := open(t, tcpURL(s, name))
		a, b := connect(t, d, m), connect(t, d, m)
		ctx := context.Background()
		update := func(c workload.Conn) error {
			_, err := c.Exec(ctx, "payment.warehouse_update", 1.0, int64(1))
			return err
		}
		err := b.InTx(ctx, workload.TxOptions{}, func(ctx context.Context) error {
			var n int64
			if err := b.QueryRow(ctx, "tpcc.nopm").Scan(&n); err != nil { // b's snapshot
				return err
			}
			if err := update(a); err != nil { // a commits meanwhile
				return err
			}
			return update(b)
		})
		var pe *pgconn.PgError
		if !errors.Is(err, workload.ErrRetry) || !errors.As(err, &pe) || pe.Code != "40001" {
			t.Errorf("got %v, want a retryable serialization failure", err)
		}
	})
}

// Expected outcomes map to the workload's sentinels in every mode.
func TestErrorMapping(t *testing.T) {
	s := server(t)
	name := freshDB(t)
	admin(t, "DROP DATABASE IF EXISTS map_empty", "CREATE DATABASE map_empty")
	t.Cleanup(func() { _ = tryExec(s, "DROP DATABASE IF EXISTS map_empty") })
	runModes(t, func(t *testing.T, m workload.Mode) {
		ctx := context.Background()
		c := connect(t, open(t, tcpURL(s, name)), m)
		var price float64
		var iName, iData string
		if err := c.QueryRow(ctx, "neword.item", int64(100001)).Scan(&price, &iName, &iData); !errors.Is(err, workload.ErrNoRows) {
			t.Errorf("unused item: %v, want ErrNoRows", err)
		}
		e := connect(t, open(t, tcpURL(s, "map_empty")), m)
		if _, err := e.Query(ctx, "meta.get"); !errors.Is(err, workload.ErrNoSchema) {
			t.Errorf("no schema: %v, want ErrNoSchema", err)
		}
		// The invalid-item rollback of the neword routine, with the
		// d_next_o_id increment undone.
		var before, after, oID int64
		if err := c.QueryRow(ctx, "tpcc.nopm").Scan(&before); err != nil {
			t.Fatal(err)
		}
		err := c.QueryRow(ctx, "neword.call", int64(1), int64(1), int64(1), int64(2), "5,100001", "1,1", "3,4").Scan(&oID)
		if !errors.Is(err, workload.ErrUserAbort) {
			t.Errorf("neword.call with an unused item: %v, want ErrUserAbort", err)
		}
		if err := c.QueryRow(ctx, "tpcc.nopm").Scan(&after); err != nil || after != before {
			t.Errorf("d_next_o_id sum %d -> %d (%v): the rollback must undo the increment", before, after, err)
		}
	})
}

// Portable scan targets work on int, numeric, text and timestamptz columns.
func TestScanTargets(t *testing.T) {
	s := server(t)
	name := freshDB(t)
	runModes(t, func(t *testing.T, m workload.Mode) {
		ctx := context.Background()
		c := connect(t, open(t, tcpURL(s, name)), m)
		var id int64
		var first, middle, last, street1, street2, city, state, zip, phone, credit string
		var since any
		var lim, disc, bal float64
		err := c.QueryRow(ctx, "payment.customer", int64(1), int64(1), int64(1)).Scan(&id, &first, &middle, &last,
			&street1, &street2, &city, &state, &zip, &phone, &since, &credit, &lim, &disc, &bal)
		if err != nil {
			t.Fatal(err)
		}
		if id != 1 || middle != "OE" || lim != 50000 || bal != -10 {
			t.Errorf("customer 1: id %d middle %q limit %v balance %v", id, middle, lim, bal)
		}
		if st, ok := since.(string); !ok || len(st) < 19 {
			t.Errorf("c_since into *any: %T %v, want text", since, since)
		}
		// *string from timestamptz, numeric and int; *any from numeric.
		var sinceText, balText, idText string
		var balAny any
		err = c.QueryRow(ctx, "payment.customer", int64(1), int64(1), int64(1)).Scan(&idText, &first, &middle, &last,
			&street1, &street2, &city, &state, &zip, &phone, &sinceText, &credit, &lim, &disc, &balAny)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := time.Parse("2006-01-02 15:04:05", sinceText[:min(19, len(sinceText))]); err != nil || idText != "1" {
			t.Errorf("*string: c_since %q, c_id %q", sinceText, idText)
		}
		if f, ok := balAny.(float64); !ok || f != -10 {
			t.Errorf("numeric into *any: %T %v", balAny, balAny)
		}
		if err := c.QueryRow(ctx, "delivery.order_line_sum", int64(1), int64(1), int64(2500)).Scan(&balText); err != nil || balText == "" {
			t.Errorf("numeric into *string: %q %v", balText, err)
		}
	})
}
