package interrupt

import (
	"bytes"
	"context"
	"os"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/sledge-bench/sledge/internal/testdb"
)

// What each signal does, by its number and its time after the first.
func TestSignalCounting(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	cases := []struct {
		name        string
		stopTimeout time.Duration // 0: the default
		after       []time.Duration
		want        []action
	}{
		{"one", 0, []time.Duration{0}, []action{first}},
		{"timeout's two copies", 0, []time.Duration{0, time.Millisecond}, []action{first, repeated}},
		{"a third escalates", 0, []time.Duration{0, time.Second, 2 * time.Second, 3 * time.Second}, []action{first, repeated, escalate, ignore}},
		{"a second after the default stop timeout", 0, []time.Duration{0, 11 * time.Second, 12 * time.Second}, []action{first, escalate, ignore}},
		{"a second within a longer stop timeout", time.Minute, []time.Duration{0, 11 * time.Second}, []action{first, repeated}},
		{"a second after a longer stop timeout", time.Minute, []time.Duration{0, 61 * time.Second}, []action{first, escalate}},
		{"a second after a shorter stop timeout", 2 * time.Second, []time.Duration{0, 3 * time.Second}, []action{first, escalate}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			st := newState()
			ctx := context.WithValue(context.Background(), key{}, st)
			StopTimeout(ctx, tc.stopTimeout)
			for i, d := range tc.after {
				if got := st.signal(t0.Add(d)); got != tc.want[i] {
					t.Errorf("signal %d: %v, want %v", i+1, got, tc.want[i])
				}
			}
			wantAbandoned := tc.want[len(tc.want)-1] >= escalate
			if IsAbandoned(ctx) != wantAbandoned {
				t.Errorf("abandoned %v, want %v", IsAbandoned(ctx), wantAbandoned)
			}
		})
	}
}

// Detach outlives its parent's cancellation, keeps its values and ends
// with the escalation; without a stop it is context.WithoutCancel.
func TestDetach(t *testing.T) {
	type vk struct{}
	parent, cancel := context.WithCancel(context.WithValue(context.Background(), vk{}, "v"))
	st := newState()
	ctx, abandon := context.WithValue(parent, key{}, st), st.abandon
	d := Detach(ctx)
	cancel()
	if d.Err() != nil || d.Value(vk{}) != "v" {
		t.Fatalf("detached: err %v, value %v", d.Err(), d.Value(vk{}))
	}
	child, stop := context.WithTimeout(d, time.Hour)
	defer stop()
	abandon()
	<-child.Done() // the escalation reaches contexts made from it
	if d.Err() == nil || !IsAbandoned(ctx) {
		t.Error("not ended by the escalation")
	}
	if Abandoned(parent) != nil || Detach(parent).Done() != nil {
		t.Error("a context without a stop has an escalation")
	}
}

// Real signals to this process: the first cancels, the second says one
// line, the third escalates; when saving then does not finish, the exit
// (130) names what was not saved.
func TestCatch(t *testing.T) {
	saveBound = 100 * time.Millisecond
	var mu sync.Mutex
	var stderr bytes.Buffer
	w := writerFunc(func(p []byte) (int, error) {
		mu.Lock()
		defer mu.Unlock()
		return stderr.Write(p)
	})
	exited := make(chan int, 1)
	ctx := Catch(w, func(code int) { exited <- code })
	saved := Pending(ctx, "the result of job 7")
	Pending(ctx, "the result of job 8")
	saved()
	for i, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGINT} {
		if err := syscall.Kill(os.Getpid(), sig); err != nil {
			t.Fatal(err)
		}
		testdb.Delivered(os.Getpid(), sig)
		if i == 0 {
			<-ctx.Done()
		}
	}
	<-Abandoned(ctx)
	if code := <-exited; code != ExitCode {
		t.Errorf("exit %d, want 130", code)
	}
	mu.Lock()
	defer mu.Unlock()
	want := "sledge: already stopping: what was measured will be printed and saved; a third Ctrl-C or SIGTERM stops without waiting for transactions in flight\n" +
		"sledge: stopping without waiting for transactions in flight; what was measured is saved\n" +
		"sledge: printing and saving what was measured took longer than 100ms: exiting without saving the result of job 8\n"
	if stderr.String() != want {
		t.Errorf("stderr:\n%s\nwant:\n%s", stderr.String(), want)
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }
