package nvcontainer

import (
	"context"
	"errors"
	"os"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/go-nvc/nvc/internal/testutil"
	"github.com/go-nvc/nvc/internal/testutil/container"
)

// TestApplySharedRootfs: two containers started from one rootfs
// directory are configured at once; one Apply succeeds, the other fails
// at its last point and takes its changes back. The failed one must not
// unlink placeholders the other has mounted (an unlink detaches the
// mount in every namespace): after each of 10 rounds the successful
// container has its whole plan.
func TestApplySharedRootfs(t *testing.T) {
	h := newTestHost(t)
	p := h.testPlan(t, fedoraLayout, 8)
	late := &ApplyOptions{fault: func(s Step, _ string) error {
		if s == StepCommit {
			return errFault
		}
		return nil
	}}
	for round := range 10 {
		dir := memDir(t)
		testutil.BuildTree(t, dir, rootfsSpec(fedoraLayout))
		ok := container.Start(t, &container.Options{Rootfs: dir})
		failing := container.Start(t, &container.Options{Rootfs: dir})
		var okErr, failErr error
		var wg sync.WaitGroup
		start := make(chan struct{})
		wg.Go(func() { <-start; okErr = p.Apply(context.Background(), ctrOf(ok), nil) })
		wg.Go(func() { <-start; failErr = p.Apply(context.Background(), ctrOf(failing), late) })
		close(start)
		wg.Wait()
		if okErr != nil {
			t.Fatalf("round %d: %v", round, okErr)
		}
		var ae *ApplyError
		if !errors.As(failErr, &ae) || !errors.Is(failErr, errFault) || ae.UndoErr != nil {
			t.Fatalf("round %d: the failing Apply = %v, want the fault and a clean undo", round, failErr)
		}
		for _, e := range checkApplied(ok, p) {
			t.Errorf("round %d: the configured container: %s", round, e)
		}
		if t.Failed() {
			return
		}
	}
}

// TestApplyWaitsForRootfsLock: while another configure holds the rootfs
// (its flock), Apply waits, changes nothing and gives up when ctx ends;
// once the lock is free it goes through.
func TestApplyWaitsForRootfsLock(t *testing.T) {
	h := newTestHost(t)
	p := h.testPlan(t, fedoraLayout, 1)
	c := startIn(t, fedoraLayout, false)
	before := layoutOf(t, c.HostRootfs)
	f, err := os.Open(c.HostRootfs)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	err = p.Apply(ctx, ctrOf(c), nil)
	var ae *ApplyError
	if !errors.As(err, &ae) || !errors.Is(err, context.DeadlineExceeded) || ae.Step != StepEnter || ae.UndoErr != nil {
		t.Fatalf("Apply on a locked rootfs = %v, want a deadline at step enter", err)
	}
	if after := layoutOf(t, c.HostRootfs); after != before {
		t.Errorf("Apply changed the locked rootfs:\n%s", lineDiff(before, after))
	}
	unix.Flock(int(f.Fd()), unix.LOCK_UN)
	if err := p.Apply(context.Background(), ctrOf(c), nil); err != nil {
		t.Fatal(err)
	}
}
