// Command tbl writes the rows of a CH-benCHmark build (TPC-C's nine
// tables and the three added ones, as `sledge build ch` loads them) as
// '|'-separated files <table>.tbl, NULL as an empty field, dates
// 'YYYY-MM-DD HH:MM:SS', for scripts/ch-answers to load into DuckDB.
//
//	go run ./internal/workload/ch/answers/tbl -out DIR [-warehouses 1] [-seed 1] [-load "2020-06-15 12:00:00"]
package main

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/sledge-bench/sledge/internal/workload/ch"
	"github.com/sledge-bench/sledge/internal/workload/tpcc"
)

func main() {
	out := flag.String("out", "", "directory to write the .tbl files to")
	wh := flag.Int("warehouses", 1, "warehouses")
	seed := flag.Uint64("seed", 1, "the build's seed")
	load := flag.String("load", "2020-06-15 12:00:00", "the load time stamped on the dates (UTC)")
	flag.Parse()
	if *out == "" {
		fmt.Fprintln(os.Stderr, "tbl: -out is required")
		os.Exit(2)
	}
	lt, err := time.Parse(time.DateTime, *load)
	if err != nil {
		fmt.Fprintf(os.Stderr, "tbl: -load: %v\n", err)
		os.Exit(2)
	}
	if err := write(*out, *wh, *seed, lt); err != nil {
		fmt.Fprintf(os.Stderr, "tbl: %v\n", err)
		os.Exit(1)
	}
}

func write(dir string, wh int, seed uint64, lt time.Time) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	w := ch.New(ch.Config{TPCC: tpcc.Config{Warehouses: wh, Seed: seed}})
	w.SetLoadTime(lt)
	for _, t := range w.Tables() {
		if t.Name == "sledge_meta" {
			continue
		}
		f, err := os.Create(filepath.Join(dir, t.Name+".tbl"))
		if err != nil {
			return err
		}
		b := bufio.NewWriterSize(f, 1<<20)
		var buf [][]any
		for i := range t.Batches {
			buf = t.Fill(i, buf)
			for _, row := range buf {
				for k, v := range row {
					if k > 0 {
						b.WriteByte('|')
					}
					switch x := v.(type) {
					case nil:
					case time.Time:
						b.WriteString(x.UTC().Format(time.DateTime))
					case float64:
						b.WriteString(strconv.FormatFloat(x, 'f', -1, 64))
					case int64:
						b.WriteString(strconv.FormatInt(x, 10))
					case string:
						b.WriteString(x)
					default:
						return fmt.Errorf("%s: a value of type %T", t.Name, v)
					}
				}
				b.WriteByte('\n')
			}
		}
		if err := b.Flush(); err != nil {
			return err
		}
		if err := f.Close(); err != nil {
			return err
		}
	}
	return nil
}
