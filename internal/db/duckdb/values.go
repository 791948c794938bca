//go:build cgo

package duckdb

import (
	"database/sql"
	"errors"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"time"

	duck "github.com/duckdb/duckdb-go/v2"
)

// conflict reports whether err is DuckDB's optimistic concurrency control
// refusing a write: another transaction wrote the same row since this one
// began ("Conflict on tuple deletion", "Conflict on update", a commit that
// finds a conflict). The transaction can only roll back; a retry may pass.
func conflict(err error) bool {
	var de *duck.Error
	if errors.As(err, &de) && de.Type == duck.ErrorTypeTransaction {
		return strings.Contains(strings.ToLower(de.Msg), "conflict")
	}
	msg := err.Error()
	return strings.Contains(msg, "TransactionContext Error") && strings.Contains(strings.ToLower(msg), "conflict")
}

// value is a scan target that gives DuckDB's values to the Go types the
// workloads scan into: a DECIMAL (duck.Decimal) to a float64 or its digits
// to a string, a HUGEINT (sum of integers, *big.Int) and the narrow
// integers to an int64, a time to a string as TIMESTAMP text.
type value struct{ dest any }

func (v *value) Scan(src any) error {
	switch x := src.(type) {
	case duck.Decimal:
		if p, ok := v.dest.(*string); ok {
			*p = x.String()
			return nil
		}
		src = x.Float64()
	case *big.Int:
		if !x.IsInt64() {
			return fmt.Errorf("duckdb: %s does not fit in 64 bits", x)
		}
		src = x.Int64()
	case int32:
		src = int64(x)
	case int16:
		src = int64(x)
	case int8:
		src = int64(x)
	case uint8:
		src = int64(x)
	case uint16:
		src = int64(x)
	case uint32:
		src = int64(x)
	case uint64:
		if x > math.MaxInt64 {
			return fmt.Errorf("duckdb: %d does not fit in an int64", x)
		}
		src = int64(x)
	case float32:
		src = float64(x)
	}
	return assign(v.dest, src)
}

// assign stores a normalized value (nil, int64, float64, bool, string,
// []byte, time.Time) in dest.
func assign(dest, src any) error {
	if s, ok := dest.(sql.Scanner); ok {
		return s.Scan(src)
	}
	if src == nil {
		switch p := dest.(type) {
		case *any:
			*p = nil
			return nil
		case *[]byte:
			*p = nil
			return nil
		}
		return fmt.Errorf("converting NULL to %T is unsupported", dest)
	}
	switch p := dest.(type) {
	case *any:
		*p = src
		return nil
	case *string:
		switch x := src.(type) {
		case string:
			*p = x
		case []byte:
			*p = string(x)
		case int64:
			*p = strconv.FormatInt(x, 10)
		case float64:
			*p = strconv.FormatFloat(x, 'g', -1, 64)
		case bool:
			*p = strconv.FormatBool(x)
		case time.Time:
			*p = string(appendTime(nil, x))
		default:
			return fmt.Errorf("unsupported type %T for a string", src)
		}
		return nil
	case *[]byte:
		switch x := src.(type) {
		case []byte:
			*p = append((*p)[:0], x...)
		case string:
			*p = append((*p)[:0], x...)
		default:
			return fmt.Errorf("unsupported type %T for []byte", src)
		}
		return nil
	case *int64:
		n, err := toInt(src)
		*p = n
		return err
	case *int:
		n, err := toInt(src)
		*p = int(n)
		return err
	case *int32:
		n, err := toInt(src)
		if err == nil && (n > math.MaxInt32 || n < math.MinInt32) {
			err = fmt.Errorf("%d does not fit in an int32", n)
		}
		*p = int32(n)
		return err
	case *float64:
		switch x := src.(type) {
		case float64:
			*p = x
		case int64:
			*p = float64(x)
		case string:
			f, err := strconv.ParseFloat(x, 64)
			*p = f
			return err
		default:
			return fmt.Errorf("unsupported type %T for a float64", src)
		}
		return nil
	case *bool:
		b, ok := src.(bool)
		if !ok {
			return fmt.Errorf("unsupported type %T for a bool", src)
		}
		*p = b
		return nil
	case *time.Time:
		t, ok := src.(time.Time)
		if !ok {
			return fmt.Errorf("unsupported type %T for a time", src)
		}
		*p = t
		return nil
	}
	return fmt.Errorf("unsupported scan target %T", dest)
}

func toInt(src any) (int64, error) {
	switch x := src.(type) {
	case int64:
		return x, nil
	case float64:
		if x != math.Trunc(x) {
			return 0, fmt.Errorf("%v is not an integer", x)
		}
		return int64(x), nil
	case bool:
		if x {
			return 1, nil
		}
		return 0, nil
	case string:
		return strconv.ParseInt(x, 10, 64)
	}
	return 0, fmt.Errorf("unsupported type %T for an integer", src)
}

// appendTime writes a DATE (midnight) as YYYY-MM-DD and any other time as
// TIMESTAMP text, UTC, to the microsecond DuckDB keeps.
func appendTime(b []byte, t time.Time) []byte {
	t = t.UTC()
	if h, m, s := t.Clock(); h == 0 && m == 0 && s == 0 && t.Nanosecond() == 0 {
		return t.AppendFormat(b, time.DateOnly)
	}
	return t.AppendFormat(b, "2006-01-02 15:04:05.999999")
}

// appendOther writes the values db.TextValues does not know: DECIMAL as
// its digits, HUGEINT and the narrow integers in decimal.
func appendOther(b []byte, src any) ([]byte, bool) {
	switch x := src.(type) {
	case duck.Decimal:
		return append(b, x.String()...), true
	case *big.Int:
		return x.Append(b, 10), true
	case int32:
		return strconv.AppendInt(b, int64(x), 10), true
	case int16:
		return strconv.AppendInt(b, int64(x), 10), true
	case int8:
		return strconv.AppendInt(b, int64(x), 10), true
	case uint8:
		return strconv.AppendUint(b, uint64(x), 10), true
	case uint16:
		return strconv.AppendUint(b, uint64(x), 10), true
	case uint32:
		return strconv.AppendUint(b, uint64(x), 10), true
	}
	return b, false
}
