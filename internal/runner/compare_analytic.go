package runner

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/sledge-bench/sledge/internal/db"
	"github.com/sledge-bench/sledge/internal/jobs"
	"github.com/sledge-bench/sledge/internal/report"
	"github.com/sledge-bench/sledge/internal/workload"
)

// matrixFlags are compare's flags that shape the matrix of modes,
// transports and virtual users: an analytic workload (tpch) runs its own
// tests and refuses them, as `run tpch` refuses run's.
var matrixFlags = []string{"modes", "transports", "vus", "connections", "rampup", "duration", "iterations", "progress",
	"socket", "host", "port"}

// dbList is compare's --db: repeatable, in the order given. The first URL
// is also the common flag's value (the one URL of the matrix, the
// compare job's database).
type dbList struct {
	one  pflag.Value // the common flag's own value
	list *[]string
}

func (v *dbList) Set(s string) error {
	if len(*v.list) == 0 {
		if err := v.one.Set(s); err != nil {
			return err
		}
	}
	*v.list = append(*v.list, s)
	return nil
}

func (v *dbList) String() string { return v.one.String() }
func (v *dbList) Type() string   { return v.one.Type() }

// URLs are the URLs given, in order.
func (v *dbList) URLs() []string { return append([]string(nil), *v.list...) }

// AnalyticCompareJSON is the result of a compare of an analytic workload
// (tpch) across databases: --json, the compare job's summary, the report.
type AnalyticCompareJSON struct {
	Workload    string             `json:"workload"`
	Cells       []AnalyticCellJSON `json:"cells"`
	Queries     []QuerySecondsJSON `json:"queries"` // per query, each database's seconds
	Seed        uint64             `json:"seed"`
	Options     map[string]string  `json:"options,omitempty"`  // the workload's run options every cell took
	Source      string             `json:"query_seconds_from"` // "power" (stream 0), else "throughput" (the streams' mean)
	Interrupted bool               `json:"interrupted"`
	JobID       int64              `json:"job_id,omitempty"`
	Host        jobs.Host          `json:"host"`
}

// AnalyticCellJSON is one database's run.
type AnalyticCellJSON struct {
	Database          string          `json:"database"` // redacted URL; the key of queries[].seconds
	Driver            string          `json:"driver"`
	DBVersion         string          `json:"db_version"`
	Transport         string          `json:"transport"`
	JobID             *int64          `json:"job_id"` // null with --no-job
	Scale             float64         `json:"scale"`
	Power             *float64        `json:"power"`
	Throughput        *float64        `json:"throughput"`
	QphH              *float64        `json:"qphh"`
	ThroughputSeconds *float64        `json:"throughput_seconds"`
	Verified          *bool           `json:"verified"`
	Ratio             *float64        `json:"ratio"`   // the first cell's headline figure (QphH, else Power) here over there; null when either lacks it
	Queries           json.RawMessage `json:"queries"` // the run's queries[], as it reported them
	Interrupted       bool            `json:"interrupted"`
	Error             string          `json:"error,omitempty"`
}

// Headline is what the ratio compares: QphH, else Power (a power test
// alone); nil when neither was measured.
func (c *AnalyticCellJSON) Headline() (string, *float64) {
	if c.QphH != nil {
		return "QphH", c.QphH
	}
	if c.Power != nil {
		return "Power", c.Power
	}
	return "", nil
}

// QuerySecondsJSON is one query's seconds on each database, by its
// cell's database key; a database that did not run it has no key.
type QuerySecondsJSON struct {
	Query   int                `json:"query"`
	Seconds map[string]float64 `json:"seconds"`
}

// analyticRun is the part of an analytic run's --json result compare
// reads: the tpch contract's keys (docs/contracts.md).
type analyticRun struct {
	Scale             float64         `json:"scale"`
	Power             *float64        `json:"power"`
	Throughput        *float64        `json:"throughput"`
	QphH              *float64        `json:"qphh"`
	ThroughputSeconds *float64        `json:"throughput_seconds"`
	Queries           json.RawMessage `json:"queries"`
	Verified          *bool           `json:"verified"`
	Interrupted       bool            `json:"interrupted"`
	Error             string          `json:"error"`
}

type analyticQuery struct {
	Stream  int     `json:"stream"`
	Query   int     `json:"query"`
	Seconds float64 `json:"seconds"`
}

// analyticCell is one database of an analytic compare.
type analyticCell struct {
	CompareCell
	url  string // raw
	key  string // the redacted URL, made unique
	info db.Info
	res  *analyticRun
}

// compareAnalytic runs the analytic workload a on every --db in turn,
// each a `sledge run` through Execute with the same options and seed, and
// compares them query by query.
func compareAnalytic(ctx context.Context, env CompareEnv, o *CompareOptions, a workload.Analytic, rawURL string) error {
	if len(o.MatrixSet) > 0 {
		bad := make([]string, len(o.MatrixSet))
		for i, n := range o.MatrixSet {
			bad[i] = "--" + n
		}
		return Usagef("%s: not for compare %s, which runs its own tests on each --db (see sledge compare --help: --db, repeated, and run's --test, --streams, --params, --no-refresh, --queries)",
			strings.Join(bad, ", "), a.Name())
	}
	if o.HTML != "" {
		if st, err := os.Stat(filepath.Dir(o.HTML)); err != nil || !st.IsDir() {
			return Usagef("--html %s: no directory %s to write it in", o.HTML, filepath.Dir(o.HTML))
		}
	}
	if o.RandomSeedSet {
		if o.SeedSet {
			return Usagef("give either --seed or --random-seed, not both")
		}
		n, err := ParseRandomSeed(o.RandomSeed)
		if err != nil {
			return Usagef("%v", err)
		}
		o.Seed, o.SeedSet = n, true
	}
	if !o.SeedSet {
		o.Seed = rand.Uint64() >> 12 // one seed for every database: the same queries
	}
	urls := o.DBs
	if len(urls) == 0 {
		urls = []string{rawURL}
	}
	for _, u := range urls {
		if _, err := db.ParseURL(u); err != nil {
			return err
		}
	}
	if env.DryRun {
		return nil
	}
	env.Job.SetSeed(o.Seed)
	// Everything is checked before the first cell: every database is
	// reached and has the schema.
	cells := make([]*analyticCell, len(urls))
	seen := map[string]int{}
	for i, u := range urls {
		info, err := probeURL(ctx, a, u, 0, o.Explicit)
		if err != nil {
			return fmt.Errorf("--db %s: %w", db.Redact(u), err)
		}
		key := db.Redact(u)
		if seen[key]++; seen[key] > 1 {
			key = fmt.Sprintf("%s #%d", key, seen[key])
		}
		c := &analyticCell{url: u, key: key, info: info}
		c.What = fmt.Sprintf("database %d/%d: %s (%s %s)", i+1, len(urls), key, info.Driver, info.Version)
		c.Database = key
		cells[i] = c
	}
	env.Job.SetMatrix(cells[0].info, "")
	if !o.JSON && env.AnalyticHeader != nil {
		keys, infos := make([]string, len(cells)), make([]db.Info, len(cells))
		for i, c := range cells {
			keys[i], infos[i] = c.key, c.info
		}
		env.AnalyticHeader(a, keys, infos, o.Seed)
	}
	done, interrupted, runErr := runCells(ctx, cells,
		func(c *analyticCell) error { return runAnalyticCell(ctx, env, o, a, c) },
		func(c *analyticCell) (bool, bool) { return c.res != nil, c.res != nil && c.res.Interrupted })
	out := analyticResult(a, o, done, interrupted, env.Job)
	env.Job.SetSummary(out)
	if len(done) > 0 || runErr == nil {
		if env.AnalyticResult != nil {
			if err := env.AnalyticResult(out); err != nil {
				return err
			}
		}
		if o.HTML != "" && len(done) > 0 {
			command := ""
			if env.Command != nil {
				command = env.Command(o.Seed)
			}
			if err := writeAnalyticReport(o.HTML, out, command); err != nil {
				return err
			}
			if !o.JSON {
				fmt.Fprintf(env.Stderr, "report written to %s\n", o.HTML)
			}
		}
	}
	if runErr != nil {
		return runErr
	}
	if interrupted {
		if !o.JSON {
			fmt.Fprintln(env.Stderr, "sledge: interrupted; the table covers the databases measured until then")
		}
		return Silent{Code: ExitInterrupted}
	}
	return nil
}

// runAnalyticCell runs the workload on one database as `sledge run …
// --json` would, in this process, through Execute: a job of its own.
func runAnalyticCell(ctx context.Context, env CompareEnv, o *CompareOptions, a workload.Analytic, c *analyticCell) error {
	spec := Spec{Version: SpecVersion, Kind: "run", Workload: a.Name(), Options: map[string]any{"seed": strconv.FormatUint(o.Seed, 10)}}
	if o.Explicit {
		spec.DB = c.url
	}
	for k, v := range o.WorkloadOptions {
		spec.Options[k] = v
	}
	var stderr bytes.Buffer
	x := Exec{Stderr: &stderr}
	if env.AnalyticStep != nil {
		x.Progress = func(line string) { env.AnalyticStep(&c.CompareCell, line) }
	}
	var res analyticRun
	jobID, measured, interrupted, err := execCell(ctx, env, &c.CompareCell, spec, x, &stderr, false, &res)
	if err != nil || !measured {
		return err
	}
	res.Interrupted = interrupted
	c.res = &res
	c.JobID = jobID
	c.Power, c.QphH, c.Warnings = res.Power, res.QphH, stderr.String()
	if env.CellDone != nil {
		env.CellDone(&c.CompareCell)
	}
	return nil
}

// querySeconds is a run's seconds per query: the power test's (stream
// 0), else the mean over the throughput test's streams; and which.
func querySeconds(raw json.RawMessage) (map[int]float64, string) {
	var qs []analyticQuery
	_ = json.Unmarshal(raw, &qs) // none: no seconds
	power := map[int]float64{}
	sum, n := map[int]float64{}, map[int]int{}
	for _, q := range qs {
		if q.Stream == 0 {
			power[q.Query] = q.Seconds
			continue
		}
		sum[q.Query] += q.Seconds
		n[q.Query]++
	}
	if len(power) > 0 {
		return power, "power"
	}
	for q := range sum {
		sum[q] /= float64(n[q])
	}
	return sum, "throughput"
}

func analyticResult(a workload.Analytic, o *CompareOptions, cells []*analyticCell, interrupted bool, job *JobRun) *AnalyticCompareJSON {
	out := &AnalyticCompareJSON{Workload: a.Name(), Cells: []AnalyticCellJSON{}, Queries: []QuerySecondsJSON{}, Seed: o.Seed,
		Options: o.WorkloadOptions, Interrupted: interrupted, Host: jobs.ThisHost(), Source: "power"}
	if job != nil {
		out.JobID = job.ID()
	}
	byQ := map[int]map[string]float64{}
	var base *float64
	var baseName string
	for i, c := range cells {
		r := c.res
		cj := AnalyticCellJSON{Database: c.key, Driver: c.info.Driver, DBVersion: c.info.Version, Transport: c.info.Transport,
			Scale: r.Scale, Power: r.Power, Throughput: r.Throughput, QphH: r.QphH, ThroughputSeconds: r.ThroughputSeconds,
			Verified: r.Verified, Queries: r.Queries, Interrupted: r.Interrupted, Error: r.Error}
		if len(cj.Queries) == 0 || string(cj.Queries) == "null" {
			cj.Queries = json.RawMessage("[]")
		}
		if c.JobID > 0 {
			id := c.JobID
			cj.JobID = &id
		}
		if i == 0 {
			baseName, base = cj.Headline()
		}
		// The first database's headline against the same figure here.
		h := cj.Power
		if baseName == "QphH" {
			h = cj.QphH
		}
		if base != nil && h != nil && *base > 0 {
			ratio := *h / *base
			cj.Ratio = &ratio
		}
		secs, src := querySeconds(cj.Queries)
		if src == "throughput" && len(secs) > 0 {
			out.Source = src
		}
		for q, s := range secs {
			if byQ[q] == nil {
				byQ[q] = map[string]float64{}
			}
			byQ[q][c.key] = s
		}
		out.Cells = append(out.Cells, cj)
	}
	qs := make([]int, 0, len(byQ))
	for q := range byQ {
		qs = append(qs, q)
	}
	sort.Ints(qs)
	for _, q := range qs {
		out.Queries = append(out.Queries, QuerySecondsJSON{Query: q, Seconds: byQ[q]})
	}
	return out
}

// writeAnalyticReport writes the HTML report of an analytic compare,
// next to its final name first: never a half-written file.
func writeAnalyticReport(path string, c *AnalyticCompareJSON, command string) error {
	r := &report.QueryReport{Title: fmt.Sprintf("sledge compare: %s across %d databases", c.Workload, len(c.Cells)),
		Command: command, Generated: time.Now(), JobID: c.JobID, Interrupted: c.Interrupted, Source: c.Source}
	h := c.Host
	for _, f := range []report.Fact{{Name: "hostname", Value: h.Hostname}, {Name: "CPU", Value: h.CPUModel},
		{Name: "CPUs", Value: strconv.Itoa(h.CPUs)}, {Name: "memory", Value: gib(h.MemoryBytes)}, {Name: "OS", Value: h.OS},
		{Name: "kernel", Value: h.Kernel}, {Name: "arch", Value: h.Arch}, {Name: "Go", Value: h.GoVersion}} {
		if f.Value != "" {
			r.Host = append(r.Host, f)
		}
	}
	r.Run = append(r.Run, report.Fact{Name: "workload", Value: c.Workload}, report.Fact{Name: "seed", Value: strconv.FormatUint(c.Seed, 10)})
	keys := make([]string, 0, len(c.Options))
	for k := range c.Options {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		r.Run = append(r.Run, report.Fact{Name: "--" + k, Value: c.Options[k]})
	}
	r.Run = append(r.Run, report.Fact{Name: "sledge", Value: Version()})
	for _, x := range c.Cells {
		d := report.Database{Name: x.Database, Driver: x.Driver, Version: x.DBVersion, Transport: x.Transport, Scale: x.Scale,
			Power: x.Power, Throughput: x.Throughput, QphH: x.QphH, ThroughputSeconds: x.ThroughputSeconds, Verified: x.Verified,
			Ratio: x.Ratio, Interrupted: x.Interrupted}
		if x.JobID != nil {
			d.JobID = *x.JobID
		}
		r.Databases = append(r.Databases, d)
	}
	for _, q := range c.Queries {
		row := report.QueryTimes{Query: q.Query, Seconds: make([]*float64, len(c.Cells))}
		for i, x := range c.Cells {
			if s, ok := q.Seconds[x.Database]; ok && !math.IsNaN(s) {
				row.Seconds[i] = &s
			}
		}
		r.Queries = append(r.Queries, row)
	}
	return writeReportFile(path, func(w io.Writer) error { return report.WriteQueries(w, r) })
}
