package testdb

import (
	"fmt"
	"os"
	"os/exec"
	"syscall"
)

// guard is a watchdog for something a test process started outside itself
// (a server that pg_ctl daemonized, a server or agent in a process group of
// its own, a network namespace): a shell that waits on a pipe whose writing
// end only this process holds. When the process ends without disarming it,
// however it ends (Ctrl-C, go test's -timeout, SIGKILL), the pipe closes
// and the shell runs its cleanup script; cleanups that t.Cleanup or
// TestMain would have run never do then.
type guard struct {
	w   *os.File
	cmd *exec.Cmd
}

// startGuard starts a guard that runs script (sh) when this process ends
// undisarmed, with cred's user when not nil. It is best effort: nil when
// the shell cannot start, and the normal cleanup still runs.
func startGuard(script string, cred *syscall.Credential) *guard {
	r, w, err := os.Pipe() // close-on-exec: no other child inherits w
	if err != nil {
		return nil
	}
	// A line read means disarmed; end of file means this process is gone.
	cmd := exec.Command("sh", "-c", "if read -r _; then exit 0; fi\n"+script)
	cmd.Stdin = r
	// A session of its own: a Ctrl-C or a signal to the test's process
	// group does not end it with the test.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Credential: cred}
	err = cmd.Start()
	r.Close()
	if err != nil {
		w.Close()
		return nil
	}
	return &guard{w: w, cmd: cmd}
}

// disarm tells the guard the cleanup was done here and waits for it to end.
func (g *guard) disarm() {
	if g == nil || g.w == nil {
		return
	}
	fmt.Fprintln(g.w, "done")
	g.w.Close()
	g.w = nil
	_ = g.cmd.Wait()
}

// killScript ends the process whose pid the shell expression pid gives,
// when there is one: SIGTERM, then SIGKILL after 30 s.
func killScript(pid string) string {
	return `p=` + pid + ` && {
	kill -TERM "$p" 2>/dev/null; i=0
	while kill -0 "$p" 2>/dev/null && [ $i -lt 300 ]; do sleep 0.1; i=$((i+1)); done
	kill -KILL "$p" 2>/dev/null; }
`
}

// shellQuote quotes s for sh.
func shellQuote(s string) string {
	out := []byte{'\''}
	for i := 0; i < len(s); i++ {
		if s[i] == '\'' {
			out = append(out, `'\''`...)
		} else {
			out = append(out, s[i])
		}
	}
	return string(append(out, '\''))
}
