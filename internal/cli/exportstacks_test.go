package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/pprof/profile"

	"github.com/sledge-bench/sledge/internal/jobs"
)

// perfFolded is folded stacks as the agent returns them from perf (the
// process name first, kernel frames marked _[k]).
const perfFolded = `postgres;__libc_start_main;main;PostmasterMain;ServerLoop;PostgresMain;exec_simple_query;PortalRun;ExecutorRun 40
postgres;__libc_start_main;main;PostmasterMain;ServerLoop;PostgresMain;pq_getbyte;secure_read;__libc_recv;tcp_recvmsg_[k] 25
postgres;PostgresMain;exec_execute_message;PortalRun;ExecutorRun;ExecScan 20
postgres;PostgresMain;LWLockAcquire;__x64_sys_futex_[k] 5
`

// runWithStacks records a real run in store and gives its job the server
// stacks a run with --stacks keeps (perf's, through the agent, are not to
// be had in every test environment); it returns the job's id.
func runWithStacks(t *testing.T, home, store string, stacks map[string]any) string {
	t.Helper()
	stdout, stderr, code := runCLI(t, home, "run", "--db", "sqlite://"+builtDB(t), "-t", "10", "--json", "--jobs-db", store)
	if code != ExitOK {
		t.Fatalf("run: exit %d: %s", code, stderr)
	}
	var run struct {
		JobID int64 `json:"job_id"`
	}
	if err := json.Unmarshal([]byte(stdout), &run); err != nil || run.JobID == 0 {
		t.Fatalf("run --json: no job_id (%v): %s", err, stdout)
	}
	if stacks == nil {
		return strconv.FormatInt(run.JobID, 10)
	}
	ctx := context.Background()
	st, err := jobs.Open(ctx, store)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	r, err := st.Get(ctx, run.JobID)
	if err != nil {
		t.Fatal(err)
	}
	var sum map[string]any
	if err := json.Unmarshal(r.Summary, &sum); err != nil {
		t.Fatal(err)
	}
	sum["server_stacks"] = stacks
	if r.Summary, err = json.Marshal(sum); err != nil {
		t.Fatal(err)
	}
	if err := st.Update(ctx, &r.Job); err != nil {
		t.Fatal(err)
	}
	return strconv.FormatInt(run.JobID, 10)
}

// jobs export --format folded writes the stacks as recorded; --format
// pprof a profile whose samples and top frames are the folded text's,
// read back by the profile package and by go tool pprof.
func TestJobsExportStacks(t *testing.T) {
	home := t.TempDir()
	store := filepath.Join(home, "jobs.db")
	id := runWithStacks(t, home, store, map[string]any{"source": "agent db1:7078", "hz": 99, "samples": 90, "folded": perfFolded})

	out, stderr, code := runCLI(t, home, "jobs", "export", id, "--format", "folded", "--jobs-db", store)
	if code != ExitOK || out != perfFolded {
		t.Fatalf("export folded: exit %d: %s\ngot:\n%s", code, stderr, out)
	}

	out, stderr, code = runCLI(t, home, "jobs", "export", id, "--format", "pprof", "--jobs-db", store)
	if code != ExitOK {
		t.Fatalf("export pprof: exit %d: %s", code, stderr)
	}
	p, err := profile.Parse(bytes.NewReader([]byte(out)))
	if err != nil {
		t.Fatalf("parse the exported profile: %v", err)
	}
	if len(p.SampleType) != 2 || p.SampleType[0].Type != "samples" || p.SampleType[0].Unit != "count" ||
		p.SampleType[1].Type != "cpu" || p.SampleType[1].Unit != "nanoseconds" || p.Period != int64(1e9)/99 {
		t.Errorf("sample types %v, period %d", p.SampleType, p.Period)
	}
	flat := map[string]int64{}
	var total, cpu int64
	for _, s := range p.Sample {
		total += s.Value[0]
		cpu += s.Value[1]
		flat[s.Location[0].Line[0].Function.Name] += s.Value[0]
		if root := s.Location[len(s.Location)-1].Line[0].Function.Name; root != "postgres" {
			t.Errorf("root frame %q, want the process name", root)
		}
	}
	if total != 90 || cpu != 90*(int64(1e9)/99) {
		t.Errorf("total %d samples, %d ns, want 90 and 90/99 s", total, cpu)
	}
	for name, want := range map[string]int64{"ExecutorRun": 40, "tcp_recvmsg_[k]": 25, "ExecScan": 20, "__x64_sys_futex_[k]": 5} {
		if flat[name] != want {
			t.Errorf("flat samples of %s: %d, want %d", name, flat[name], want)
		}
	}
	// One Location and Function per distinct frame name.
	names := map[string]bool{}
	for _, f := range p.Function {
		if names[f.Name] {
			t.Errorf("function %s twice", f.Name)
		}
		names[f.Name] = true
	}
	if len(p.Location) != len(p.Function) || len(names) != 17 {
		t.Errorf("%d locations, %d functions (%d names), want 17 each", len(p.Location), len(p.Function), len(names))
	}

	// go tool pprof agrees: the same total, ExecutorRun on top.
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Log("no go on PATH: go tool pprof not tried")
		return
	}
	file := filepath.Join(t.TempDir(), "stacks.pb.gz")
	if err := os.WriteFile(file, []byte(out), 0o600); err != nil {
		t.Fatal(err)
	}
	top, err := exec.Command(goBin, "tool", "pprof", "-top", "-sample_index=samples", file).CombinedOutput()
	if err != nil {
		t.Fatalf("go tool pprof -top: %v: %s", err, top)
	}
	var rows []string
	for _, l := range strings.Split(string(top), "\n") {
		if f := strings.Fields(l); len(f) == 6 && strings.HasSuffix(f[1], "%") {
			rows = append(rows, f[0]+" "+f[5])
		}
	}
	if !strings.Contains(string(top), "of 90 total") || len(rows) < 2 || rows[0] != "40 ExecutorRun" || rows[1] != "25 tcp_recvmsg_[k]" {
		t.Errorf("go tool pprof -top:\n%s", top)
	}
}

// A job without stacks, a run whose agent could not take them, and a
// compare: one line saying why, exit 1.
func TestJobsExportNoStacks(t *testing.T) {
	home := t.TempDir()
	store := filepath.Join(home, "jobs.db")
	plain := runWithStacks(t, home, store, nil)
	refused := runWithStacks(t, home, store, map[string]any{"source": "agent db1:7078", "hz": 99, "samples": 0,
		"why": "the agent was started without --allow-stacks"})
	for _, c := range []struct{ id, format, want string }{
		{plain, "folded", "job " + plain + " has no stacks (a run records them with --stacks)"},
		{plain, "pprof", "job " + plain + " has no stacks (a run records them with --stacks)"},
		{refused, "pprof", "job " + refused + " has no stacks: the agent was started without --allow-stacks"},
	} {
		out, stderr, code := runCLI(t, home, "jobs", "export", c.id, "--format", c.format, "--jobs-db", store)
		if code != ExitFailure || out != "" || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, c.want) {
			t.Errorf("export %s %s: exit %d, stdout %q, stderr %q, want %q", c.id, c.format, code, out, stderr, c.want)
		}
	}
	if _, stderr, code := runCLI(t, home, "jobs", "export", plain, "--format", "svg", "--jobs-db", store); code != ExitUsage ||
		!strings.Contains(stderr, "use json, csv, folded or pprof") {
		t.Errorf("--format svg: exit %d: %s", code, stderr)
	}
}
