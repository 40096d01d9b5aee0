package nvcontainer

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/go-nvc/nvc/internal/rootfs"
	"github.com/go-nvc/nvc/internal/testutil"
)

// TestApplyExhaustedDescriptors is issue 15's point 6: Apply (rootfs-only,
// in a child with a mount namespace of its own) runs under every
// RLIMIT_NOFILE from its lowest free descriptor up to one that lets
// it through, so that each descriptor it opens in turn fails with EMFILE,
// the open after a mkdirat included. Each failed Apply leaves the rootfs
// tree and the mount table as they were, with a clean undo.
func TestApplyExhaustedDescriptors(t *testing.T) {
	if !inPrivateNS(t) {
		return
	}
	h := newTestHost(t)
	p := h.testPlan(t, fedoraLayout, 2)
	p.CgroupRules = nil // rootfs-only mode
	open := openFds(t)
	failures := 0
	for limit := open; limit < open+400; limit++ {
		dir := memDir(t)
		testutil.BuildTree(t, dir, rootfsSpec(fedoraLayout))
		before, mounts := layoutOf(t, dir), readFile(t, "/proc/self/mountinfo")
		err := applyWithLimit(t, p, dir, uint64(limit))
		if err == nil {
			t.Logf("Apply failed under %d limits (%d to %d descriptors), then passed", failures, open, limit-1)
			return
		}
		failures++
		var ae *ApplyError
		require.ErrorAs(t, err, &ae, "limit %d, want EMFILE", limit)
		require.True(t, errors.Is(err, unix.EMFILE) || strings.Contains(err.Error(), "too many open files"), "limit %d: %v, want EMFILE", limit, err)
		assert.NoError(t, ae.UndoErr, "limit %d: %v: undo failed", limit, err)
		assert.Equal(t, before, layoutOf(t, dir), "limit %d: %v: the rootfs changed", limit, err)
		assert.Empty(t, mountDiff(mounts, readFile(t, "/proc/self/mountinfo")), "limit %d: the mount table changed", limit)
		os.RemoveAll(dir)
		if t.Failed() {
			return
		}
	}
	require.Failf(t, "Apply still fails", "with %d descriptors", open+400)
}

// applyWithLimit applies p to the rootfs dir with RLIMIT_NOFILE's soft
// limit lowered to limit, and restores it.
func applyWithLimit(t *testing.T, p *Plan, dir string, limit uint64) error {
	t.Helper()
	var old unix.Rlimit
	require.NoError(t, unix.Getrlimit(unix.RLIMIT_NOFILE, &old))
	require.NoError(t, unix.Setrlimit(unix.RLIMIT_NOFILE, &unix.Rlimit{Cur: limit, Max: old.Max}))
	defer unix.Setrlimit(unix.RLIMIT_NOFILE, &old)
	return p.Apply(context.Background(), Container{Rootfs: dir, Mode: ModeRootfsOnly}, nil)
}

// openFds is the lowest descriptor number free now: under that limit the
// first open fails.
func openFds(t *testing.T) int {
	t.Helper()
	des, err := os.ReadDir("/proc/self/fd")
	require.NoError(t, err)
	used := map[int]bool{}
	for _, de := range des {
		var fd int
		if _, err := fmt.Sscan(de.Name(), &fd); err == nil {
			used[fd] = true
		}
	}
	n := 0
	for used[n] {
		n++
	}
	return n
}

// TestApplyUndoNamesWhatItLeft: a file someone else puts in a directory
// Apply created makes the directory impossible to take back; the failed
// Apply's UndoErr names it (rootfs.ErrLeftBehind) instead of passing over
// it.
func TestApplyUndoNamesWhatItLeft(t *testing.T) {
	if !inPrivateNS(t) {
		return
	}
	h := newTestHost(t)
	p := h.testPlan(t, fedoraLayout, 1)
	p.CgroupRules = nil
	dir := memDir(t)
	testutil.BuildTree(t, dir, rootfsSpec(fedoraLayout))
	intruder := dir + "/usr/share/glvnd/egl_vendor.d/intruder"
	opts := &ApplyOptions{fault: func(s Step, _ string) error {
		if s == StepCommit {
			assert.NoError(t, os.WriteFile(intruder, []byte("x"), 0o644))
			return errFault
		}
		return nil
	}}
	err := p.Apply(context.Background(), Container{Rootfs: dir, Mode: ModeRootfsOnly}, opts)
	var ae *ApplyError
	require.ErrorAs(t, err, &ae, "Apply = %v, want the fault and an undo error naming what was left", err)
	require.ErrorIs(t, ae.UndoErr, rootfs.ErrLeftBehind, "Apply = %v, want the fault and an undo error naming what was left", err)
	for _, left := range []string{`"/usr/share/glvnd/egl_vendor.d"`, `"/usr/share/glvnd"`} {
		assert.ErrorContains(t, err, left, "the error does not name %s", left)
	}
	_, serr := os.Stat(intruder)
	assert.NoError(t, serr, "undo removed what it did not create")
}
