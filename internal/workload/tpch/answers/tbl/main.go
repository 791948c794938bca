// Command tbl writes the TPC-H tables of sledge's generator (which equal
// TPC dbgen 2.14's rows) as '|'-separated .tbl files, one per table, for
// loading into another engine (scripts/tpch-answers loads them into
// DuckDB to compute the reference answers of package answers).
//
//	go run ./internal/workload/tpch/answers/tbl -sf 0.01 -out DIR
//
// Values are written as dbgen writes them: decimals with two places, dates
// YYYY-MM-DD, text as is; unlike dbgen, no '|' ends a line.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/sledge-bench/sledge/internal/workload/tpch/dbgen"
)

func main() {
	sf := flag.Float64("sf", 0.01, "scale factor")
	out := flag.String("out", ".", "directory for the .tbl files")
	flag.Parse()
	if err := write(*sf, *out); err != nil {
		fmt.Fprintln(os.Stderr, "tbl:", err)
		os.Exit(1)
	}
}

func write(sf float64, dir string) error {
	sc, err := dbgen.NewScale(sf)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	var rows [][]any
	for _, tb := range dbgen.Tables(sc) {
		f, err := os.Create(filepath.Join(dir, tb.Name+".tbl"))
		if err != nil {
			return err
		}
		w := bufio.NewWriterSize(f, 1<<20)
		var line []byte
		for i := 0; i < tb.Batches; i++ {
			rows = tb.Fill(i, rows[:0])
			for _, row := range rows {
				line = line[:0]
				for c, v := range row {
					if c > 0 {
						line = append(line, '|')
					}
					switch x := v.(type) {
					case int64:
						line = strconv.AppendInt(line, x, 10)
					case float64:
						line = strconv.AppendFloat(line, x, 'f', 2, 64)
					case string:
						line = append(line, x...)
					default:
						f.Close()
						return fmt.Errorf("%s: cell of type %T", tb.Name, v)
					}
				}
				line = append(line, '\n')
				if _, err := w.Write(line); err != nil {
					f.Close()
					return err
				}
			}
		}
		if err := w.Flush(); err != nil {
			f.Close()
			return err
		}
		if err := f.Close(); err != nil {
			return err
		}
	}
	return nil
}
