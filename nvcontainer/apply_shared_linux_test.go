package nvcontainer

import (
	"context"
	"errors"
	"sync"
	"testing"

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
