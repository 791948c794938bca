package sysprobe

import (
	"context"
	"os"
	"testing"
)

// Two consecutive intervals added are the interval over both: the counters
// of three real snapshots of this process add up.
func TestIntervalAdd(t *testing.T) {
	ctx := context.Background()
	l, err := Open(ctx, Target{PID: os.Getpid()}, Options{StateHz: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	var snaps [3]Snapshot
	for i := range snaps {
		if snaps[i], err = l.Snapshot(ctx); err != nil {
			t.Fatal(err)
		}
		for j := 0; j < 2e6; j++ { // some CPU between snapshots
			_ = j * j
		}
	}
	whole := Diff(snaps[0], snaps[2])
	sum := Diff(snaps[0], snaps[1])
	sum.Add(Diff(snaps[1], snaps[2]))
	if sum.Host.CPU != whole.Host.CPU || sum.Host.ContextSwitch != whole.Host.ContextSwitch {
		t.Errorf("host: added %+v, whole %+v", sum.Host.CPU, whole.Host.CPU)
	}
	if sum.Server == nil || whole.Server == nil {
		t.Fatal("no server figures")
	}
	if sum.Server.UserNs+sum.Server.SysNs != whole.Server.UserNs+whole.Server.SysNs ||
		sum.Server.Voluntary != whole.Server.Voluntary || sum.Server.RunDelayNs != whole.Server.RunDelayNs {
		t.Errorf("server: added %+v, whole %+v", *sum.Server, *whole.Server)
	}
	if d := sum.Seconds - whole.Seconds; d > 1e-9 || d < -1e-9 {
		t.Errorf("seconds: added %v, whole %v", sum.Seconds, whole.Seconds)
	}
}
