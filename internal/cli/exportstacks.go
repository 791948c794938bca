package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/google/pprof/profile"

	"github.com/sledge-bench/sledge/internal/jobs"
	"github.com/sledge-bench/sledge/internal/runner"
)

// jobStacks returns a job's folded stacks (a run's server_stacks), or an
// error of one line saying why it has none.
func jobStacks(r *jobs.Record) (*runner.StacksJSON, error) {
	id := r.ID
	if r.Kind == "compare" {
		// The stacks are each cell's: name the cells' jobs.
		var c struct {
			Cells []struct {
				JobID *int64 `json:"job_id"`
			} `json:"cells"`
		}
		_ = json.Unmarshal(r.Summary, &c)
		var cells []string
		for _, x := range c.Cells {
			if x.JobID != nil {
				cells = append(cells, strconv.FormatInt(*x.JobID, 10))
			}
		}
		if len(cells) > 0 {
			return nil, fmt.Errorf("job %d is a compare: its stacks are its cells' jobs' (%s); export one of those", id, strings.Join(cells, ", "))
		}
		return nil, fmt.Errorf("job %d is a compare with no cell jobs: no stacks", id)
	}
	var s struct {
		Stacks *runner.StacksJSON `json:"server_stacks"`
	}
	if r.Kind != "run" || len(r.Summary) == 0 || json.Unmarshal(r.Summary, &s) != nil || s.Stacks == nil {
		return nil, fmt.Errorf("job %d has no stacks (a run records them with --stacks)", id)
	}
	if strings.TrimSpace(s.Stacks.Folded) == "" {
		why := s.Stacks.Why
		if why == "" {
			why = "none were sampled"
		}
		return nil, fmt.Errorf("job %d has no stacks: %s", id, why)
	}
	return s.Stacks, nil
}

// foldedStack is one line of folded stacks: frames root first, and how
// many samples had them.
type foldedStack struct {
	frames []string
	count  int64
}

// parseFolded reads the folded format (flamegraph.pl's stackcollapse
// output: "root;…;leaf COUNT" a line); the root is the process name.
func parseFolded(text string) ([]foldedStack, error) {
	var out []foldedStack
	for n, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		if i <= 0 {
			return nil, fmt.Errorf("folded stacks, line %d: no sample count", n+1)
		}
		c, err := strconv.ParseInt(line[i+1:], 10, 64)
		if err != nil || c < 0 {
			return nil, fmt.Errorf("folded stacks, line %d: sample count %q", n+1, line[i+1:])
		}
		out = append(out, foldedStack{frames: strings.Split(line[:i], ";"), count: c})
	}
	return out, nil
}

// stacksProfile turns folded stacks into a pprof profile: samples/count
// and, given the sampling rate, cpu/nanoseconds (a sample stands for
// 1/hz s of CPU); one Location and Function per distinct frame name.
func stacksProfile(st *runner.StacksJSON, durationNanos int64) (*profile.Profile, error) {
	stacks, err := parseFolded(st.Folded)
	if err != nil {
		return nil, err
	}
	p := &profile.Profile{SampleType: []*profile.ValueType{{Type: "samples", Unit: "count"}}, DurationNanos: durationNanos}
	var period int64
	if st.Hz > 0 {
		period = int64(1e9) / int64(st.Hz)
		p.SampleType = append(p.SampleType, &profile.ValueType{Type: "cpu", Unit: "nanoseconds"})
		p.PeriodType, p.Period = &profile.ValueType{Type: "cpu", Unit: "nanoseconds"}, period
	}
	locs := map[string]*profile.Location{}
	loc := func(name string) *profile.Location {
		if l := locs[name]; l != nil {
			return l
		}
		fn := &profile.Function{ID: uint64(len(p.Function) + 1), Name: name, SystemName: name}
		l := &profile.Location{ID: uint64(len(p.Location) + 1), Line: []profile.Line{{Function: fn}}}
		p.Function = append(p.Function, fn)
		p.Location = append(p.Location, l)
		locs[name] = l
		return l
	}
	for _, s := range stacks {
		smp := &profile.Sample{Value: []int64{s.count}}
		if period > 0 {
			smp.Value = append(smp.Value, s.count*period)
		}
		for i := len(s.frames) - 1; i >= 0; i-- { // pprof lists the leaf first
			smp.Location = append(smp.Location, loc(s.frames[i]))
		}
		p.Sample = append(p.Sample, smp)
	}
	if err := p.CheckValid(); err != nil {
		return nil, fmt.Errorf("build pprof profile: %w", err)
	}
	return p, nil
}

// writeStacks writes a job's stacks as folded text or a gzipped pprof
// profile.
func writeStacks(w io.Writer, r *jobs.Record, format string) error {
	st, err := jobStacks(r)
	if err != nil {
		return err
	}
	if format == "folded" {
		// As recorded: flamegraph.pl, inferno and speedscope read it.
		_, err := io.WriteString(w, strings.TrimRight(st.Folded, "\n")+"\n")
		return err
	}
	var dur int64
	if s := runSummaryOf(&r.Job); s != nil {
		dur = int64(s.MeasuredS * 1e9)
	}
	p, err := stacksProfile(st, dur)
	if err != nil {
		return fmt.Errorf("job %d: %w", r.ID, err)
	}
	p.Comments = append(p.Comments, fmt.Sprintf("sledge job %d: %s", r.ID, st.Source))
	if err := p.Write(w); err != nil {
		return fmt.Errorf("write pprof profile: %w", err)
	}
	return nil
}
