package tpcb_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/sledge-bench/sledge/internal/workload"
	"github.com/sledge-bench/sledge/internal/workload/tpcb"
)

// TestBuildPlan: the statements pgbench's options become, without a
// server: pgbench 15's partition bounds and DDL, and the steps mapped
// onto the build on each database.
func TestBuildPlan(t *testing.T) {
	plan := func(t *testing.T, scale int, o tpcb.InitOptions, dialect string) workload.BuildPlan {
		t.Helper()
		w := tpcb.New(tpcb.Config{Scale: scale, Init: o})
		if err := w.Validate(); err != nil {
			t.Fatal(err)
		}
		p, err := w.BuildPlan(dialect)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	t.Run("default is the script files", func(t *testing.T) {
		for _, o := range []tpcb.InitOptions{{}, {Steps: "dtgvp", Fillfactor: 100}} {
			if p := plan(t, 1, o, "postgres"); p.Scripts != nil || p.Load != workload.LoadClient || p.After != nil {
				t.Errorf("%+v: %+v", o, p)
			}
		}
	})
	t.Run("range partitions", func(t *testing.T) {
		// scale 2, 3 partitions: ⌈200,000/3⌉ = 66,667 aids each.
		p := plan(t, 2, tpcb.InitOptions{Partitions: 3, Fillfactor: 90, Unlogged: true}, "postgres")
		want := []string{
			"CREATE UNLOGGED TABLE pgbench_history (tid int, bid int, aid int, delta int, mtime timestamp, filler char(22))",
			"CREATE UNLOGGED TABLE pgbench_tellers (tid int NOT NULL, bid int, tbalance int, filler char(84)) WITH (fillfactor = 90)",
			"CREATE UNLOGGED TABLE pgbench_accounts (aid int NOT NULL, bid int, abalance int, filler char(84)) PARTITION BY RANGE (aid)",
			"CREATE UNLOGGED TABLE pgbench_branches (bid int NOT NULL, bbalance int, filler char(88)) WITH (fillfactor = 90)",
			"CREATE UNLOGGED TABLE pgbench_accounts_1 PARTITION OF pgbench_accounts FOR VALUES FROM (MINVALUE) TO (66668) WITH (fillfactor = 90)",
			"CREATE UNLOGGED TABLE pgbench_accounts_2 PARTITION OF pgbench_accounts FOR VALUES FROM (66668) TO (133335) WITH (fillfactor = 90)",
			"CREATE UNLOGGED TABLE pgbench_accounts_3 PARTITION OF pgbench_accounts FOR VALUES FROM (133335) TO (MAXVALUE) WITH (fillfactor = 90)",
		}
		if got := p.Scripts["tables"]; !slices.Equal(got, want) {
			t.Errorf("tables:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	})
	t.Run("hash partitions and tablespaces", func(t *testing.T) {
		p := plan(t, 1, tpcb.InitOptions{Partitions: 2, PartitionMethod: "hash", Tablespace: `my"ts`, IndexTablespace: "ix"}, "postgres")
		tables := p.Scripts["tables"]
		if len(tables) != 6 || !strings.HasSuffix(tables[2], `PARTITION BY HASH (aid) TABLESPACE "my""ts"`) ||
			!strings.HasSuffix(tables[5], "FOR VALUES WITH (MODULUS 2, REMAINDER 1) WITH (fillfactor = 100)") {
			t.Errorf("tables:\n%s", strings.Join(tables, "\n"))
		}
		if ix := p.Scripts["indexes"]; len(ix) != 5 || ix[4] != `ALTER TABLE pgbench_accounts ADD PRIMARY KEY (aid) USING INDEX TABLESPACE "ix"` {
			t.Errorf("indexes:\n%s", strings.Join(ix, "\n"))
		}
	})
	t.Run("server-side generation and foreign keys", func(t *testing.T) {
		p := plan(t, 3, tpcb.InitOptions{Steps: "dtGvp", ForeignKeys: true}, "postgres")
		if p.Load != workload.LoadServer || len(p.ServerLoad) != 2 || len(p.ServerMark) != 1 || len(p.After) != 5 ||
			!strings.Contains(p.ServerLoad[1], "generate_series(1, 300000)") || !strings.Contains(p.ServerMark[0], "INSERT INTO pgbench_branches") {
			t.Errorf("%+v", p)
		}
	})
	t.Run("steps in another order, repeated", func(t *testing.T) {
		// pgbench's order of the letters given: before the load, the
		// load, after it (f once the marker is in).
		p := plan(t, 1, tpcb.InitOptions{Steps: "t pgd vf"}, "postgres")
		pre, post := p.Scripts["drop"], p.Scripts["indexes"]
		if p.Load != workload.LoadClient || len(pre) != 8 || !strings.HasPrefix(pre[1], "CREATE TABLE pgbench_history") ||
			!strings.HasPrefix(pre[7], "ALTER TABLE pgbench_accounts ADD PRIMARY KEY") {
			t.Errorf("before the load: %q", pre)
		}
		if len(post) != 3 || !strings.HasPrefix(post[1], "DROP TABLE IF EXISTS pgbench_accounts") || !strings.HasPrefix(post[2], "VACUUM ANALYZE") {
			t.Errorf("after the load: %q", post)
		}
		if _, ok := p.Scripts["tables"]; !ok || p.Scripts["tables"] != nil || len(p.After) != 5 {
			t.Errorf("%+v", p)
		}
		// pgbench fails f before p; so does the build (p after f runs
		// after it, once the marker is loaded).
		p = plan(t, 1, tpcb.InitOptions{Steps: "dtgfp"}, "postgres")
		if len(p.Scripts["indexes"]) != 0 || len(p.After) != 9 || !strings.Contains(p.After[1], "FOREIGN KEY") || !strings.Contains(p.After[8], "PRIMARY KEY (aid)") {
			t.Errorf("dtgfp: %q", p.After)
		}
		p = plan(t, 2, tpcb.InitOptions{Steps: "ddtGp"}, "postgres")
		if p.Load != workload.LoadServer || len(p.Scripts["drop"]) != 6 || len(p.Scripts["indexes"]) != 4 || len(p.ServerMark) != 1 {
			t.Errorf("ddtGp: %+v", p)
		}
		w := tpcb.New(tpcb.Config{Scale: 1, Init: tpcb.InitOptions{Steps: "dtgvgp"}})
		if _, err := w.BuildPlan("postgres"); err == nil || !strings.Contains(err.Error(), "give g or G once") {
			t.Errorf("two loads: %v", err)
		}
		w = tpcb.New(tpcb.Config{Scale: 1, Init: tpcb.InitOptions{Steps: "tdg"}})
		if _, err := w.BuildPlan("sqlite"); err == nil || !strings.Contains(err.Error(), "in the order dtgGvpf") {
			t.Errorf("sqlite tdg: %v", err)
		}
	})
	t.Run("steps left out", func(t *testing.T) {
		p := plan(t, 1, tpcb.InitOptions{Steps: "tp"}, "postgres")
		if _, ok := p.Scripts["drop"]; !ok || p.Load != workload.LoadNone || len(p.Scripts["indexes"]) != 4 {
			t.Errorf("%+v", p)
		}
		p = plan(t, 1, tpcb.InitOptions{Steps: "dtg"}, "mysql")
		if _, ok := p.Scripts["indexes"]; !ok || p.Scripts["indexes"] != nil || p.After != nil || p.Load != workload.LoadClient {
			t.Errorf("mysql dtg: %+v", p)
		}
		p = plan(t, 1, tpcb.InitOptions{}, "sqlite")
		if _, ok := p.Scripts["tables"]; ok || !slices.Equal(p.After, []string{"ANALYZE"}) {
			t.Errorf("sqlite default: %+v", p)
		}
	})
}
