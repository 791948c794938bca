//go:build cgo

package duckdb

import (
	"context"
	sqldriver "database/sql/driver"
	"errors"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"sync"
	"time"

	duck "github.com/duckdb/duckdb-go/v2"

	"github.com/sledge-bench/sledge/internal/workload"
)

// Load appends rows to table t through DuckDB's appender, on a connection
// of its own: the rows go into DuckDB's column chunks directly, with no
// SQL to parse (docs/duckdb.md has the measurement against multi-row
// INSERTs). Concurrent callers each use their own appender; DuckDB's
// appends do not conflict.
func (d *DB) Load(ctx context.Context, t *workload.Table, rows [][]any) error {
	if len(rows) == 0 {
		return nil
	}
	if err := d.load(ctx, t, rows); err != nil {
		return fmt.Errorf("duckdb: load %s: %w", t.Name, classify(err))
	}
	return nil
}

func (d *DB) load(ctx context.Context, t *workload.Table, rows [][]any) error {
	conv, err := d.tables.get(ctx, d, t.Name, t.Columns)
	if err != nil {
		return err
	}
	c, err := d.pool.Conn(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	return c.Raw(func(dc any) error {
		a, err := duck.NewAppenderWithColumns(dc.(sqldriver.Conn), "", "", t.Name, t.Columns)
		if err != nil {
			return err
		}
		vals := make([]sqldriver.Value, len(t.Columns))
		for i, r := range rows {
			if i%4096 == 0 {
				if err := ctx.Err(); err != nil {
					return errors.Join(err, a.Clear(), a.Close())
				}
			}
			if len(r) != len(vals) {
				return errors.Join(fmt.Errorf("row has %d values for %d columns", len(r), len(vals)), a.Clear(), a.Close())
			}
			for j, v := range r {
				if vals[j], err = conv[j](v); err != nil {
					return errors.Join(fmt.Errorf("column %s: %w", t.Columns[j], err), a.Clear(), a.Close())
				}
			}
			if err := a.AppendRow(vals...); err != nil {
				return errors.Join(err, a.Clear(), a.Close())
			}
		}
		return a.CloseWithCancel(ctx)
	})
}

// converter turns a loaded value into what the appender takes for its
// column: it binds no text to a DATE and takes a DECIMAL as its unscaled
// integer.
type converter func(v any) (sqldriver.Value, error)

// tableCache keeps each table's converters, read once from the catalog.
type tableCache struct {
	mu sync.Mutex
	m  map[string][]converter
}

func (tc *tableCache) reset() {
	tc.mu.Lock()
	tc.m = nil
	tc.mu.Unlock()
}

func (tc *tableCache) get(ctx context.Context, d *DB, table string, cols []string) ([]converter, error) {
	key := table + "\x00" + strings.Join(cols, "\x00")
	tc.mu.Lock()
	defer tc.mu.Unlock()
	if c, ok := tc.m[key]; ok {
		return c, nil
	}
	rs, err := d.pool.QueryContext(ctx, "SELECT column_name, data_type, numeric_scale FROM duckdb_columns() WHERE schema_name = 'main' AND table_name = $1", table)
	if err != nil {
		return nil, err
	}
	defer rs.Close()
	types := map[string]converter{}
	for rs.Next() {
		var name, typ string
		var scale any
		if err := rs.Scan(&name, &typ, &scale); err != nil {
			return nil, err
		}
		types[strings.ToLower(name)] = converterFor(typ, scale)
	}
	if err := rs.Err(); err != nil {
		return nil, err
	}
	if len(types) == 0 {
		return nil, fmt.Errorf("Catalog Error: Table with name %s does not exist!", table)
	}
	out := make([]converter, len(cols))
	for i, c := range cols {
		conv, ok := types[strings.ToLower(c)]
		if !ok {
			return nil, fmt.Errorf("no column %s", c)
		}
		out[i] = conv
	}
	if tc.m == nil {
		tc.m = map[string][]converter{}
	}
	tc.m[key] = out
	return out, nil
}

// converterFor is the converter of a column of DuckDB type typ.
func converterFor(typ string, scale any) converter {
	switch {
	case strings.HasPrefix(typ, "DECIMAL"):
		var width, sc int
		if _, err := fmt.Sscanf(typ, "DECIMAL(%d,%d)", &width, &sc); err != nil {
			if n, ok := scale.(int32); ok {
				sc = int(n)
			}
			width = 18
		}
		return decimalConverter(uint8(width), uint8(sc))
	case typ == "DATE":
		return timeConverter(time.DateOnly)
	case strings.HasPrefix(typ, "TIMESTAMP"):
		return timeConverter("2006-01-02 15:04:05")
	case typ == "VARCHAR":
		return textConverter
	}
	return same
}

func same(v any) (sqldriver.Value, error) { return v, nil }

func textConverter(v any) (sqldriver.Value, error) {
	switch x := v.(type) {
	case int64:
		return strconv.FormatInt(x, 10), nil
	case int:
		return strconv.Itoa(x), nil
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64), nil
	case time.Time:
		return string(appendTime(nil, x)), nil
	}
	return v, nil
}

func timeConverter(layout string) converter {
	return func(v any) (sqldriver.Value, error) {
		if s, ok := v.(string); ok {
			t, err := time.Parse(layout, s)
			if err != nil {
				return nil, err
			}
			return t, nil
		}
		return v, nil
	}
}

// decimalConverter scales a float64 or an integer to DECIMAL(width,scale)'s
// unscaled integer, rounded to the nearest: the appender stores an
// integer it is given as the unscaled value, and would truncate a float.
func decimalConverter(width, scale uint8) converter {
	pow := math.Pow10(int(scale))
	ipow := int64(pow)
	return func(v any) (sqldriver.Value, error) {
		var n int64
		switch x := v.(type) {
		case nil:
			return nil, nil
		case float64:
			f := math.Round(x * pow)
			if math.Abs(f) >= 1<<62 {
				return nil, fmt.Errorf("%v is out of range", x)
			}
			n = int64(f)
		case int64:
			n = x * ipow
		case int:
			n = int64(x) * ipow
		case string:
			return v, nil // DuckDB parses it
		default:
			return nil, fmt.Errorf("unsupported type %T for a decimal", v)
		}
		return duck.Decimal{Width: width, Scale: scale, Value: big.NewInt(n)}, nil
	}
}
