package runner

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/spf13/pflag"

	"github.com/sledge-bench/sledge/internal/workload"
)

// children are the local worker processes of `run --workers N`.
type children struct {
	cmds   []*exec.Cmd
	outs   []*lockedBuffer
	exits  []chan error // each gets the process's exit
	failed chan struct{}
	once   sync.Once
	mu     sync.Mutex
	first  error
	// shown: the worker whose failure first was returned, -1 none; stop
	// does not show it again.
	firstIdx, shown int
	abandon         <-chan struct{} // closed when the stop escalated (internal/interrupt)
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.b.Len() > 1<<20 { // enough to say what went wrong
		return len(p), nil
	}
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// spawnWorkers starts N workers of this run: sledge itself with run's
// arguments and the worker's, the database URL in $SLEDGE_DB (never in
// argv, which ps shows to everyone).
func spawnWorkers(o *RunOptions, env RunEnv, addr, url string) (*children, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errNoExecutable, err)
	}
	n := o.Cluster.Workers
	k := newChildren()
	base := os.Environ()
	vars := make([]string, 0, len(base)+1)
	for _, v := range base {
		if !strings.HasPrefix(v, "SLEDGE_DB=") && !strings.HasPrefix(v, "JOB_COMPLETION_INDEX=") {
			vars = append(vars, v)
		}
	}
	vars = append(vars, "SLEDGE_DB="+url)
	for i := range n {
		cmd := exec.Command(exe, workerArgs(env.WorkerArgs, addr, i, n)...)
		cmd.Env = vars
		if err := k.start(cmd); err != nil {
			k.stop(io.Discard)
			return nil, fmt.Errorf("start worker %d: %w", i, err)
		}
	}
	return k, nil
}

func newChildren() *children {
	return &children{failed: make(chan struct{}), shown: -1}
}

// start runs cmd as the next worker, its output kept, and watches its exit.
func (k *children) start(cmd *exec.Cmd) error {
	out := &lockedBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		return err
	}
	i := len(k.cmds)
	exit := make(chan error, 1)
	k.cmds, k.outs, k.exits = append(k.cmds, cmd), append(k.outs, out), append(k.exits, exit)
	go func() {
		err := cmd.Wait()
		if err != nil && !okExit(err) {
			k.fail(i, fmt.Errorf("worker %d: %s", i, lastWords(out.String(), err)))
		}
		exit <- err
		close(exit)
	}()
	return nil
}

// okExit: a worker that ran exits 0, 3 (failed transactions: the
// coordinator's result says so) or 130 (interrupted with the run).
func okExit(err error) bool {
	if ee, ok := err.(*exec.ExitError); ok {
		c := ee.ExitCode()
		return c == ExitFailedTx || c == ExitInterrupted
	}
	return false
}

func (k *children) fail(i int, err error) {
	k.mu.Lock()
	if k.first == nil {
		k.first, k.firstIdx = err, i
	}
	k.mu.Unlock()
	k.once.Do(func() { close(k.failed) })
}

// firstErr is the first worker's failure, which the caller reports: stop
// does not show it again.
func (k *children) firstErr() error {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.first != nil {
		k.shown = k.firstIdx
	}
	return k.first
}

// stop waits a little for the workers to exit, kills those that do not,
// and shows the output of those that failed, each line prefixed with
// "worker k:".
func (k *children) stop(stderr io.Writer) {
	// A worker exits right after its final; one still running then is
	// stuck. After an escalated stop they get a moment only.
	deadline := time.NewTimer(5 * time.Second)
	defer deadline.Stop()
	abandon := k.abandon
	expired := false
	for i, exit := range k.exits {
		var err error
		got := false
		for !expired && !got {
			select {
			case err = <-exit:
				got = true
			case <-deadline.C:
				expired = true
			case <-abandon:
				abandon = nil
				deadline.Reset(time.Second)
			}
		}
		if !got {
			select {
			case err = <-exit:
			default:
				_ = k.cmds[i].Process.Kill()
				err = <-exit
			}
		}
		k.mu.Lock()
		shown := k.shown == i
		k.mu.Unlock()
		if err != nil && !okExit(err) && stderr != nil && !shown {
			// As the first failure reads: the worker's own last line,
			// then what it printed before that.
			out := k.outs[i].String()
			fmt.Fprintf(stderr, "sledge: worker %d: %s%s\n", i, lastWords(out, err), indented(i, out))
		}
	}
}

// lastWords is a failed worker's own last line (its error, as sledge
// prints it), else how it ended.
func lastWords(out string, err error) string {
	lines := trimOutput(out, 1)
	if l := strings.TrimSpace(lines[0]); l != "" {
		return strings.TrimPrefix(l, "sledge: ")
	}
	return err.Error()
}

// indented is what a failed worker printed before its last line (which
// lastWords shows), each line prefixed "worker i:".
func indented(i int, out string) string {
	lines := trimOutput(out, 21)
	if strings.TrimSpace(out) == "" || len(lines) < 2 {
		return ""
	}
	var b strings.Builder
	for _, l := range lines[:len(lines)-1] {
		fmt.Fprintf(&b, "\nworker %d: %s", i, l)
	}
	return b.String()
}

// coordinatorOnly are run's flags a local worker does not get: the
// database (it comes in $SLEDGE_DB), the seed (the coordinator gives it),
// what only the coordinator shows or records, and the scale-out flags,
// which the coordinator sets per worker.
var coordinatorOnly = map[string]bool{
	"workers": true, "listen": true, "coordinator": true, "worker-index": true, "worker-timeout": true,
	"db": true, "json": true, "progress": true, "metrics": true, "metrics-linger": true, "cpuprofile": true,
	"jobs-db": true, "no-job": true, "seed": true, "random-seed": true, "threshold": true,
	// The coordinator reads the server's side and the agent (issue 25).
	"agent": true, "agent-token-file": true, "agent-target": true, "agent-ca": true, "stacks": true,
}

// WorkerArgs is a local worker's command line (docs/workers.md) from
// run's parsed flags fs and positional arguments: run, the workload if
// one was named, and every flag given but coordinatorOnly's, in the
// --name=value form (a repeated flag once per value).
func WorkerArgs(fs *pflag.FlagSet, positional []string) []string {
	out := []string{"run"}
	if len(positional) > 0 {
		if _, err := workload.Lookup(positional[0]); err == nil {
			out = append(out, positional[0])
		}
	}
	fs.Visit(func(f *pflag.Flag) {
		if coordinatorOnly[f.Name] {
			return
		}
		if sv, ok := f.Value.(pflag.SliceValue); ok {
			for _, v := range sv.GetSlice() {
				out = append(out, "--"+f.Name+"="+v)
			}
			return
		}
		out = append(out, "--"+f.Name+"="+f.Value.String())
	})
	return out
}
