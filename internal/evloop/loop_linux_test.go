//go:build linux

package evloop

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// socketpair returns a non-blocking end for the loop and a blocking end
// for a peer goroutine.
func socketpair(t *testing.T) (loopEnd int, peer *os.File) {
	t.Helper()
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.SetNonblock(fds[0], true); err != nil {
		t.Fatal(err)
	}
	peer = os.NewFile(uintptr(fds[1]), "peer")
	t.Cleanup(func() { syscall.Close(fds[0]); peer.Close() })
	return fds[0], peer
}

// readOn reads from a non-blocking descriptor as a loop connection does:
// a read that would block waits on l.
func readOn(l *Loop, f *FD, p []byte, deadline time.Time) (int, error) {
	for {
		n, err := syscall.Read(f.Sysfd, p)
		if err == syscall.EAGAIN {
			if err := l.Wait(f, deadline); err != nil {
				return 0, err
			}
			continue
		}
		return n, err
	}
}

func newLoop(t *testing.T, raw bool, kind WaitKind) *Loop {
	t.Helper()
	l, err := New(raw, kind)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(l.Close)
	if l.WaitKind() != kind {
		t.Skipf("no %s wait here: %s", kind, l.Fallback())
	}
	return l
}

// waitKinds runs fn on each way a loop waits.
func waitKinds(t *testing.T, fn func(t *testing.T, kind WaitKind)) {
	for _, kind := range []WaitKind{WaitEpoll, WaitIOUring} {
		t.Run(kind.String(), func(t *testing.T) { fn(t, kind) })
	}
}

// run runs l on a goroutine of its own; the returned channel is closed
// when every coroutine has returned. The test fails if that takes longer
// than a generous bound (a hang, not a measurement).
func run(t *testing.T, l *Loop) <-chan struct{} {
	done := make(chan struct{})
	go func() { l.Run(); close(done) }()
	return done
}

func await(t *testing.T, done <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatalf("%s did not end", what)
	}
}

// Many coroutines, each talking to an echo peer over its own socket, all
// on one loop: every answer arrives whole and in order, and every
// coroutine runs on the loop's one thread throughout.
func TestManyCoroutinesOverSocketpairs(t *testing.T) {
	waitKinds(t, func(t *testing.T, kind WaitKind) {
		for _, raw := range []bool{false, true} {
			t.Run(fmt.Sprintf("raw=%v", raw), func(t *testing.T) {
				const vus, rounds = 40, 50
				l := newLoop(t, raw, kind)
				errs := make(chan error, vus)
				for i := range vus {
					fd, peer := socketpair(t)
					go func() { // echo
						buf := make([]byte, 64)
						for {
							n, err := peer.Read(buf)
							if err != nil {
								return
							}
							if _, err := peer.Write(buf[:n]); err != nil {
								return
							}
						}
					}()
					l.Go(func() {
						f := &FD{Sysfd: fd}
						tid := syscall.Gettid()
						buf := make([]byte, 64)
						for r := range rounds {
							msg := fmt.Sprintf("vu %d round %d", i, r)
							if _, err := syscall.Write(fd, []byte(msg)); err != nil {
								errs <- err
								return
							}
							got := 0
							for got < len(msg) {
								n, err := readOn(l, f, buf[got:], time.Time{})
								if err != nil {
									errs <- err
									return
								}
								got += n
							}
							if string(buf[:got]) != msg {
								errs <- fmt.Errorf("vu %d read %q, want %q", i, buf[:got], msg)
								return
							}
							if now := syscall.Gettid(); now != tid {
								errs <- fmt.Errorf("vu %d moved from thread %d to %d", i, tid, now)
								return
							}
						}
						errs <- nil
					})
				}
				await(t, run(t, l), "the loop")
				for range vus {
					if err := <-errs; err != nil {
						t.Error(err)
					}
				}
			})
		}
	})
}

// Sleeps end in the order of their lengths, after at least their length;
// a cancelled context ends a sleep and a condition wait early.
func TestTimersAndCancellation(t *testing.T) {
	waitKinds(t, func(t *testing.T, kind WaitKind) {
		l := newLoop(t, false, kind)
		var mu sync.Mutex
		var order []int
		for _, ms := range []int{30, 10, 20} {
			l.Go(func() {
				start := time.Now()
				if !l.Sleep(context.Background(), time.Duration(ms)*time.Millisecond) {
					t.Errorf("sleep %dms: cut short", ms)
				}
				if took := time.Since(start); took < time.Duration(ms)*time.Millisecond {
					t.Errorf("sleep %dms: woke after %s", ms, took)
				}
				mu.Lock()
				order = append(order, ms)
				mu.Unlock()
			})
		}
		ctx, cancel := context.WithCancel(context.Background())
		cut := make(chan string, 2)
		l.Go(func() {
			if l.Sleep(ctx, time.Hour) {
				t.Error("an hour's sleep ran out")
			}
			cut <- "sleep"
		})
		l.Go(func() {
			if l.WaitFor(ctx, func() bool { return false }) {
				t.Error("a condition that never holds held")
			}
			cut <- "waitfor"
		})
		done := run(t, l)
		time.Sleep(50 * time.Millisecond)
		cancel()
		await(t, done, "the loop")
		if fmt.Sprint(order) != "[10 20 30]" {
			t.Errorf("sleeps ended in the order %v", order)
		}
		if len(cut) != 2 {
			t.Errorf("%d waits were cut short by the cancellation, want 2", len(cut))
		}
	})
}

// WaitFor returns when its condition comes true: tried again when another
// goroutine pokes the loop.
func TestWaitForPoke(t *testing.T) {
	waitKinds(t, func(t *testing.T, kind WaitKind) {
		l := newLoop(t, true, kind)
		ch := make(chan int, 1)
		got := -1
		l.Go(func() {
			ok := l.WaitFor(context.Background(), func() bool {
				select {
				case got = <-ch:
					return true
				default:
					return false
				}
			})
			if !ok {
				t.Error("WaitFor gave up")
			}
		})
		done := run(t, l)
		time.Sleep(20 * time.Millisecond)
		ch <- 7
		l.Poke()
		await(t, done, "the loop")
		if got != 7 {
			t.Errorf("got %d, want 7", got)
		}
	})
}

// A read waiting on the loop ends: when the peer closes (EOF), when its
// deadline passes, and when the socket is shut down (how a connection's
// deadline in the past interrupts a call).
func TestWaitEnds(t *testing.T) {
	waitKinds(t, func(t *testing.T, kind WaitKind) {
		cases := []struct {
			name     string
			deadline time.Duration
			act      func(fd int, peer *os.File)
			want     error // nil: the read returns 0 bytes, no error (EOF)
		}{
			{"peer closes", 0, func(_ int, peer *os.File) { peer.Close() }, nil},
			{"deadline", 50 * time.Millisecond, func(int, *os.File) {}, os.ErrDeadlineExceeded},
			{"shutdown", 0, func(fd int, _ *os.File) { syscall.Shutdown(fd, syscall.SHUT_RDWR) }, nil},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				l := newLoop(t, true, kind)
				fd, peer := socketpair(t)
				var n int
				var err error
				l.Go(func() {
					var dl time.Time
					if tc.deadline > 0 {
						dl = time.Now().Add(tc.deadline)
					}
					n, err = readOn(l, &FD{Sysfd: fd}, make([]byte, 8), dl)
				})
				done := run(t, l)
				time.Sleep(20 * time.Millisecond)
				tc.act(fd, peer)
				await(t, done, "the read")
				if tc.want != nil && !errors.Is(err, tc.want) || tc.want == nil && (err != nil || n != 0) {
					t.Errorf("read: %d, %v; want %v", n, err, tc.want)
				}
			})
		}
	})
}

// Waiting from a goroutine that is not one of the loop's coroutines is
// refused: it must block by itself.
func TestWaitOffLoop(t *testing.T) {
	waitKinds(t, func(t *testing.T, kind WaitKind) {
		l := newLoop(t, false, kind)
		fd, _ := socketpair(t)
		release := make(chan struct{})
		l.Go(func() { l.WaitFor(context.Background(), func() bool { return isClosed(release) }) })
		done := run(t, l)
		time.Sleep(10 * time.Millisecond)
		if err := l.Wait(&FD{Sysfd: fd}, time.Time{}); !errors.Is(err, ErrNotOnLoop) {
			t.Errorf("Wait off the loop: %v, want ErrNotOnLoop", err)
		}
		var nilLoop *Loop
		if err := nilLoop.Wait(&FD{Sysfd: fd}, time.Time{}); !errors.Is(err, ErrNotOnLoop) {
			t.Errorf("Wait on no loop: %v, want ErrNotOnLoop", err)
		}
		close(release)
		l.Poke()
		await(t, done, "the loop")
	})
}

func isClosed(ch chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// A garbage collection completes while every coroutine of a raw loop
// waits for an answer that has not come (raw waits are bounded), and the
// answers are read afterwards.
func TestGCDuringWaits(t *testing.T) {
	waitKinds(t, func(t *testing.T, kind WaitKind) {
		l := newLoop(t, true, kind)
		const vus = 8
		peers := make([]*os.File, vus)
		got := make(chan string, vus)
		for i := range vus {
			fd, peer := socketpair(t)
			peers[i] = peer
			l.Go(func() {
				buf := make([]byte, 4)
				n, err := readOn(l, &FD{Sysfd: fd}, buf, time.Time{})
				if err != nil {
					got <- err.Error()
					return
				}
				got <- string(buf[:n])
			})
		}
		done := run(t, l)
		time.Sleep(20 * time.Millisecond)
		gcDone := make(chan struct{})
		go func() { runtime.GC(); close(gcDone) }()
		await(t, gcDone, "a garbage collection during the waits")
		for _, p := range peers {
			p.Write([]byte("late"))
		}
		await(t, done, "the loop")
		for range vus {
			if s := <-got; s != "late" {
				t.Errorf("read %q after the collection", s)
			}
		}
	})
}

// A descriptor moves between loops (a connection shared through a pool):
// each wait goes to the loop of the coroutine waiting.
func TestFDMovesBetweenLoops(t *testing.T) {
	waitKinds(t, func(t *testing.T, kind WaitKind) {
		a, b := newLoop(t, false, kind), newLoop(t, false, kind)
		fd, peer := socketpair(t)
		f := &FD{Sysfd: fd}
		var turn atomic.Int32
		for i, l := range []*Loop{a, b, a, b} {
			l.Go(func() {
				// A channel wait would stall the whole loop: take turns
				// through the loop instead.
				l.WaitFor(context.Background(), func() bool { return turn.Load() == int32(i) })
				buf := make([]byte, 2)
				if n, err := readOn(l, f, buf, time.Time{}); err != nil || string(buf[:n]) != "ok" {
					t.Errorf("read %d: %q, %v", i, buf[:n], err)
				}
				turn.Add(1)
				a.Poke()
				b.Poke()
			})
		}
		da, db := run(t, a), run(t, b)
		for range 4 {
			time.Sleep(10 * time.Millisecond)
			peer.Write([]byte("ok"))
		}
		await(t, da, "loop a")
		await(t, db, "loop b")
	})
}

// Waiting before reading (a caller that knows its socket was empty): an
// answer that came while the coroutine slept, its event taken by the
// loop's wait with nobody waiting, still ends the wait at once.
func TestWaitAfterTheEventCame(t *testing.T) {
	waitKinds(t, func(t *testing.T, kind WaitKind) {
		l := newLoop(t, false, kind)
		fd, peer := socketpair(t)
		f := &FD{Sysfd: fd}
		got := make(chan string, 1)
		l.Go(func() {
			// Registered with the loop by a first wait, which the socket's
			// being writable ends; then waits until nothing is pending.
			for l.Wait(f, time.Now().Add(5*time.Millisecond)) == nil {
			}
			peer.Write([]byte("hi"))
			l.Sleep(context.Background(), 30*time.Millisecond) // the loop sees the event meanwhile
			if err := l.Wait(f, time.Now().Add(10*time.Second)); err != nil {
				t.Errorf("wait after the event: %v", err)
			}
			buf := make([]byte, 2)
			n, _ := syscall.Read(fd, buf)
			got <- string(buf[:n])
		})
		await(t, run(t, l), "the loop")
		if s := <-got; s != "hi" {
			t.Errorf("read %q", s)
		}
	})
}

// A loop asked for io_uring where io_uring_setup is refused (as a seccomp
// filter or kernel.io_uring_disabled refuses it) waits on epoll, says so
// and why, and works.
func TestIOUringRefusedFallsBackToEpoll(t *testing.T) {
	refuseIOUring.Store(true)
	defer refuseIOUring.Store(false)
	l, err := New(true, WaitIOUring)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(l.Close)
	if l.WaitKind() != WaitEpoll || !strings.Contains(l.Fallback(), "io_uring_setup: operation not permitted") {
		t.Fatalf("wait %s, fallback %q; want epoll for io_uring_setup's refusal", l.WaitKind(), l.Fallback())
	}
	fd, peer := socketpair(t)
	got := make(chan string, 1)
	l.Go(func() {
		buf := make([]byte, 2)
		n, err := readOn(l, &FD{Sysfd: fd}, buf, time.Time{})
		if err != nil {
			got <- err.Error()
			return
		}
		got <- string(buf[:n])
	})
	done := run(t, l)
	peer.Write([]byte("ok"))
	await(t, done, "the loop")
	if s := <-got; s != "ok" {
		t.Errorf("read %q on the fallback", s)
	}
	// Asked for epoll (or the default), a loop says nothing of a fallback.
	for _, k := range []WaitKind{WaitEpoll, WaitDefault} {
		l := newLoop(t, false, k.resolve())
		if l.Fallback() != "" {
			t.Errorf("%s: fallback %q", k, l.Fallback())
		}
	}
}

// A descriptor the loop waited on, forgotten and closed (without a
// shutdown), lets its socket go: the peer reads the end of the stream.
// An io_uring poll would otherwise hold the socket open.
func TestForgetLetsTheSocketClose(t *testing.T) {
	waitKinds(t, func(t *testing.T, kind WaitKind) {
		l := newLoop(t, false, kind)
		fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
		if err != nil {
			t.Fatal(err)
		}
		syscall.SetNonblock(fds[0], true)
		peer := os.NewFile(uintptr(fds[1]), "peer")
		t.Cleanup(func() { peer.Close() })
		f := &FD{Sysfd: fds[0]}
		release := make(chan struct{})
		l.Go(func() {
			// Registered by a wait, which the socket's being writable ends.
			if err := l.Wait(f, time.Now().Add(10*time.Second)); err != nil {
				t.Errorf("wait: %v", err)
			}
			f.Forget()
			syscall.Close(fds[0])
			// The loop goes on (its ring open) while the peer reads.
			l.WaitFor(context.Background(), func() bool { return isClosed(release) })
		})
		done := run(t, l)
		eof := make(chan error, 1)
		go func() {
			_, err := peer.Read(make([]byte, 1))
			eof <- err
		}()
		select {
		case err := <-eof:
			if err != io.EOF {
				t.Errorf("peer read %v, want EOF", err)
			}
		case <-time.After(20 * time.Second):
			t.Error("the closed socket stayed open")
		}
		close(release)
		l.Poke()
		await(t, done, "the loop")
	})
}

// More sockets than the ring has submission entries register in one turn
// (every coroutine waits before the loop's first wait): all are polled,
// and every answer arrives.
func TestManyRegistrationsInOneTurn(t *testing.T) {
	waitKinds(t, func(t *testing.T, kind WaitKind) {
		const vus = ringEntries + 44
		l := newLoop(t, false, kind)
		peers := make([]*os.File, vus)
		got := make(chan error, vus)
		for i := range vus {
			fd, peer := socketpair(t)
			peers[i] = peer
			l.Go(func() {
				buf := make([]byte, 1)
				n, err := readOn(l, &FD{Sysfd: fd}, buf, time.Time{})
				if err == nil && (n != 1 || buf[0] != byte(i)) {
					err = fmt.Errorf("vu %d read %v", i, buf[:n])
				}
				got <- err
			})
		}
		done := run(t, l)
		time.Sleep(20 * time.Millisecond) // every coroutine waits by now
		for i, p := range peers {
			p.Write([]byte{byte(i)})
		}
		await(t, done, "the loop")
		for range vus {
			if err := <-got; err != nil {
				t.Error(err)
			}
		}
	})
}
