package nvcontainer

import (
	"context"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
		require.NoError(t, okErr, "round %d", round)
		var ae *ApplyError
		require.ErrorAs(t, failErr, &ae, "round %d: the failing Apply = %v, want the fault and a clean undo", round, failErr)
		require.ErrorIs(t, failErr, errFault, "round %d: the failing Apply, want the fault and a clean undo", round)
		require.NoError(t, ae.UndoErr, "round %d: the failing Apply = %v, want the fault and a clean undo", round, failErr)
		assert.Empty(t, checkApplied(ok, p), "round %d: the configured container", round)
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
	require.NoError(t, err)
	defer f.Close()
	require.NoError(t, unix.Flock(int(f.Fd()), unix.LOCK_EX))
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	err = p.Apply(ctx, ctrOf(c), nil)
	var ae *ApplyError
	require.ErrorAs(t, err, &ae, "Apply on a locked rootfs = %v, want a deadline at step enter", err)
	require.ErrorIs(t, err, context.DeadlineExceeded, "Apply on a locked rootfs, want a deadline at step enter")
	require.Equal(t, StepEnter, ae.Step, "Apply on a locked rootfs = %v, want a deadline at step enter", err)
	require.NoError(t, ae.UndoErr, "Apply on a locked rootfs = %v, want a deadline at step enter", err)
	assert.Equal(t, before, layoutOf(t, c.HostRootfs), "Apply changed the locked rootfs")
	unix.Flock(int(f.Fd()), unix.LOCK_UN)
	require.NoError(t, p.Apply(context.Background(), ctrOf(c), nil))
}
