package sysprobe

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// StacksHz is perf record's sampling rate (-F 99: off the beat of timers
// that tick at round rates).
const StacksHz = 99

// ErrStacksNotAllowed: the watch was opened without AllowStacks.
var ErrStacksNotAllowed = errors.New("stacks not recorded: the agent was not started with --allow-stacks")

// stackRecorder is one running perf record.
type stackRecorder struct {
	cmd    *exec.Cmd
	dir    string
	out    string
	stderr bytes.Buffer
	done   chan error
}

// StacksAvailable says whether StartStacks can work here, and why not.
func StacksAvailable(allowed bool) (bool, string) {
	if !allowed {
		return false, ErrStacksNotAllowed.Error()
	}
	if _, err := exec.LookPath("perf"); err != nil {
		return false, "stacks not recorded: perf is not installed (not in PATH)"
	}
	return true, ""
}

// StartStacks starts perf record -F 99 -g on the target's processes (those
// of the watch when it starts).
func (l *Local) StartStacks(ctx context.Context) error {
	if ok, why := StacksAvailable(l.opt.AllowStacks); !ok {
		return errors.New(why)
	}
	l.mu.Lock()
	var err error
	switch {
	case l.closed:
		err = errors.New("stacks: the watch is closed")
	case !l.hasTarget():
		err = errors.New("stacks: the watch has no server process")
	case l.stacks != nil:
		err = errors.New("stacks: already recording")
	}
	pids := make([]string, 0, len(l.procs))
	for pid := range l.procs {
		pids = append(pids, strconv.Itoa(pid))
	}
	l.mu.Unlock()
	if err != nil {
		return err
	}
	if len(pids) == 0 {
		return errors.New("stacks: the server's processes ended")
	}
	sort.Strings(pids)
	dir, err := os.MkdirTemp("", "sledge-perf-")
	if err != nil {
		return fmt.Errorf("stacks: %w", err)
	}
	r := &stackRecorder{dir: dir, out: dir + "/perf.data", done: make(chan error, 1)}
	r.cmd = exec.Command("perf", "record", "-F", strconv.Itoa(StacksHz), "-g", "-p", strings.Join(pids, ","), "-o", r.out, "-q")
	r.cmd.Stderr = &r.stderr
	if err := r.cmd.Start(); err != nil {
		os.RemoveAll(dir)
		return fmt.Errorf("stacks: start perf record: %w", err)
	}
	go func() { r.done <- r.cmd.Wait() }()
	// perf exits at once when it may not trace (perf_event_paranoid,
	// no CAP_PERFMON): tell that now rather than at StopStacks. The
	// watch's lock is not held meanwhile: snapshots go on.
	select {
	case err := <-r.done:
		os.RemoveAll(dir)
		return fmt.Errorf("stacks: perf record exited: %v: %s", err, firstLine(r.stderr.String()))
	case <-time.After(200 * time.Millisecond):
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed || l.stacks != nil {
		r.abort()
		if l.closed {
			return errors.New("stacks: the watch is closed")
		}
		return errors.New("stacks: already recording")
	}
	l.stacks = r
	return nil
}

// StopStacks stops perf record (SIGINT, as ^C), folds its samples and
// returns them.
func (l *Local) StopStacks(ctx context.Context) (Folded, error) {
	l.mu.Lock()
	r := l.stacks
	l.stacks = nil
	l.mu.Unlock()
	if r == nil {
		if ok, why := StacksAvailable(l.opt.AllowStacks); !ok {
			return Folded{Hz: StacksHz, Why: why}, errors.New(why)
		}
		return Folded{}, errors.New("stacks: not recording (StartStacks was not called)")
	}
	defer os.RemoveAll(r.dir)
	_ = r.cmd.Process.Signal(syscall.SIGINT)
	select {
	case <-r.done:
	case <-time.After(10 * time.Second):
		_ = r.cmd.Process.Kill()
		<-r.done
	case <-ctx.Done():
		_ = r.cmd.Process.Kill()
		<-r.done
		return Folded{}, ctx.Err()
	}
	// perf record writes its file once it has set up; stopped before
	// that (a busy host, a short recording) it leaves none: no samples.
	if _, err := os.Stat(r.out); errors.Is(err, os.ErrNotExist) {
		return Folded{Hz: StacksHz, Why: "perf record was stopped before it wrote a sample"}, nil
	}
	cmd := exec.CommandContext(ctx, "perf", "script", "-i", r.out, "-F", "comm,ip,sym,dso")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return Folded{}, fmt.Errorf("stacks: perf script: %v: %s", err, firstLine(stderr.String()))
	}
	text, n := foldPerfScript(out)
	return Folded{Hz: StacksHz, Samples: n, Text: text}, nil
}

// abort kills a recording (Close while recording).
func (r *stackRecorder) abort() {
	_ = r.cmd.Process.Kill()
	<-r.done
	os.RemoveAll(r.dir)
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return s
}

// foldPerfScript folds perf script's output: each sample is a header
// line ("comm pid/tid … :" or, with -F comm,ip,sym, "comm") followed by
// one line per frame, leaf first ("\tADDR SYM+OFF (DSO)" or
// "\tADDR SYM"), and a blank line. The folded line is the process name
// then the frames root first, ';' separated, with the count of identical
// stacks; lines are sorted.
func foldPerfScript(out []byte) (string, int64) {
	counts := map[string]int64{}
	var total int64
	var comm string
	var frames []string
	flush := func() {
		if comm == "" && len(frames) == 0 {
			return
		}
		parts := make([]string, 0, len(frames)+1)
		parts = append(parts, sanitizeFrame(comm))
		for i := len(frames) - 1; i >= 0; i-- {
			parts = append(parts, frames[i])
		}
		counts[strings.Join(parts, ";")]++
		total++
		comm, frames = "", frames[:0]
	}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<16), 1<<24)
	for sc.Scan() {
		line := sc.Text()
		if strings.TrimSpace(line) == "" {
			flush()
			continue
		}
		if line[0] != ' ' && line[0] != '\t' {
			flush()
			comm = headerComm(line)
			continue
		}
		frames = append(frames, frameName(strings.TrimSpace(line)))
	}
	flush()
	keys := make([]string, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "%s %d\n", k, counts[k])
	}
	return b.String(), total
}

// headerComm is the process name of a sample header: the text before
// the pid, or before the first tab or run of spaces followed by a digit.
func headerComm(line string) string {
	line = strings.TrimRight(line, " :")
	fs := strings.Fields(line)
	// Find the first field that is a pid ("123" or "123/456"): the name
	// is everything before it (names may hold spaces).
	for i := 1; i < len(fs); i++ {
		f := fs[i]
		if j := strings.IndexByte(f, '/'); j > 0 {
			f = f[:j]
		}
		if isDigits(f) {
			return strings.Join(fs[:i], " ")
		}
	}
	return strings.TrimSpace(line)
}

// frameName reads "ADDR SYM+0xOFF (DSO)" into SYM, or "[DSO]" when the
// symbol is unknown.
func frameName(s string) string {
	fs := strings.SplitN(s, " ", 2)
	if len(fs) < 2 {
		return sanitizeFrame(s)
	}
	rest := strings.TrimSpace(fs[1])
	dso := ""
	if i := strings.LastIndex(rest, " ("); i >= 0 && strings.HasSuffix(rest, ")") {
		dso = rest[i+2 : len(rest)-1]
		rest = strings.TrimSpace(rest[:i])
	}
	if i := strings.LastIndex(rest, "+0x"); i > 0 {
		rest = rest[:i]
	}
	if rest == "" || rest == "[unknown]" {
		if dso != "" && dso != "[unknown]" {
			return "[" + sanitizeFrame(dso[strings.LastIndexByte(dso, '/')+1:]) + "]"
		}
		return "[unknown]"
	}
	return sanitizeFrame(rest)
}

// sanitizeFrame keeps a frame from breaking the folded format: no ';',
// no newline, and no trailing count-like " N".
func sanitizeFrame(s string) string {
	s = strings.Map(func(r rune) rune {
		switch r {
		case ';':
			return ':'
		case '\n', '\r', '\t':
			return ' '
		}
		return r
	}, s)
	if s == "" {
		return "[unknown]"
	}
	return s
}
