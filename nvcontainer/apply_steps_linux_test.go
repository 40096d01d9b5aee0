package nvcontainer

import (
	"context"
	"os"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/go-nvc/nvc/internal/testutil/container"
)

// TestApplyStepMarks applies BenchmarkApply's 8-GPU plan to three fresh
// pivoted containers on tmpfs, marking the start of each Apply, each
// step's fault point and the return with a faccessat of
// /nvc-step/<step> ("begin", the Step, "end"), for a tracer to split the
// system calls by step: scripts/apply-steps.sh runs it under strace. It
// runs only with NVC_STEP_MARKS=1.
func TestApplyStepMarks(t *testing.T) {
	if os.Getenv("NVC_STEP_MARKS") != "1" {
		t.Skip("NVC_STEP_MARKS=1 runs it (scripts/apply-steps.sh)")
	}
	h := newTestHost(t)
	p := h.testPlan(t, fedoraLayout, 0)
	h.addGPUs(t, p, 8)
	mark := func(s string) { unix.Faccessat(unix.AT_FDCWD, "/nvc-step/"+s, unix.F_OK, 0) }
	opts := &ApplyOptions{Libraries: h.host.Driver, fault: func(s Step, _ string) error { mark(string(s)); return nil }}
	for range 3 {
		c := container.Start(t, &container.Options{Rootfs: shmRootfs(t), PivotRoot: true})
		mark("begin")
		err := p.Apply(context.Background(), ctrOf(c), opts)
		mark("end")
		require.NoError(t, err)
	}
}
