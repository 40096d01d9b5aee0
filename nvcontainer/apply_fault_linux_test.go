package nvcontainer

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-nvc/nvc/internal/testutil/container"
)

var errFault = errors.New("injected fault")

// point is one place where Apply checks its context.
type point struct {
	step Step
	path string
}

// faultAt returns options whose fault hook records every point in seen and
// calls hit at the k-th (counting from 0); hit's error fails Apply there.
func faultAt(k int, seen *[]point, hit func(point) error) *ApplyOptions {
	n := 0
	return &ApplyOptions{fault: func(s Step, p string) error {
		*seen = append(*seen, point{s, p})
		n++
		if n-1 == k {
			return hit(point{s, p})
		}
		return nil
	}}
}

// faultTarget is a container with a devices cgroup, and its state before
// Apply: what every failed Apply must leave it in.
type faultTarget struct {
	c      *container.Container
	cg     devicesCgroup
	host   *hostState
	mounts string
	tree   string
	list   string
}

func newFaultTarget(t *testing.T, h *testHost) *faultTarget {
	t.Helper()
	// The image's own links (imageLinks) make every undo put a replaced
	// link back too.
	ft := &faultTarget{cg: newDevicesCgroup(t), c: startWith(t, fedoraLayout, imageLinksIn(fedoraLayout))}
	ft.cg.write(t, "cgroup.procs", strconv.Itoa(ft.c.PID))
	ft.host = recordHost(t, h.Root)
	ft.mounts, ft.tree, ft.list = ft.state(t)
	return ft
}

func (ft *faultTarget) state(t *testing.T) (mounts, tree, list string) {
	t.Helper()
	var ms []string
	for _, m := range ft.c.MountInfo(t) {
		ms = append(ms, fmt.Sprintf("%d %s %s %s", m.ID, m.Mountpoint, m.FSType, m.Options))
	}
	return strings.Join(ms, "\n"), layoutOf(t, ft.c.Path("")), ft.cg.list(t)
}

// unchanged fails t where the container, its cgroup or the host differ
// from before.
func (ft *faultTarget) unchanged(t *testing.T, what string) {
	t.Helper()
	mounts, tree, list := ft.state(t)
	assert.Equal(t, ft.mounts, mounts, "%s: the container's mounts changed", what)
	assert.Equal(t, ft.tree, tree, "%s: the container's tree changed", what)
	assert.Equal(t, ft.list, list, "%s: devices.list changed", what)
	assert.Empty(t, mountDiff(ft.host.mounts, readFile(t, "/proc/self/mountinfo")), "%s: the host's mount table changed", what)
	checkThreads(t, ft.host.ns)
}

// faultPoints applies p to a first fault target, recording every point
// where Apply checks its context, and returns them with a fresh target
// (the first one is configured now) for the faulted runs.
func faultPoints(t *testing.T, h *testHost, p *Plan) ([]point, *faultTarget) {
	t.Helper()
	ft := newFaultTarget(t, h)
	var all []point
	require.NoError(t, p.Apply(context.Background(), ctrOf(ft.c), faultAt(-1, &all, nil)))
	return all, newFaultTarget(t, h)
}

// TestApplyFaults is acceptance 4: a failure forced at each point k of
// Apply leaves the container's mount table, tree and device cgroup as they
// were, and names the step and path.
func TestApplyFaults(t *testing.T) {
	if !inPrivateNS(t) {
		return
	}
	h := newTestHost(t)
	p := h.testPlan(t, fedoraLayout, 2)
	all, ft := faultPoints(t, h, p)
	require.GreaterOrEqual(t, len(all), mountCount(p), "only %d fault points for %d mounts", len(all), mountCount(p))
	steps := map[Step]int{}
	for k := range all {
		var seen []point
		err := p.Apply(context.Background(), ctrOf(ft.c), faultAt(k, &seen, func(point) error { return errFault }))
		require.Len(t, seen, k+1, "fault %d: Apply went through %d points, the last %v; want the last at step %s", k, len(seen), seen[len(seen)-1], all[k].step)
		require.Equal(t, all[k].step, seen[k].step, "fault %d: Apply's last point %v", k, seen[k])
		want := seen[k]
		checkFault(t, k, want, err)
		ft.unchanged(t, fmt.Sprintf("fault %d at %s %q", k, want.step, want.path))
		steps[want.step]++
		if t.Failed() {
			return
		}
	}
	ft.host.check(t)
	t.Logf("%d fault points: %v", len(all), steps)
}

func checkFault(t *testing.T, k int, want point, err error) {
	t.Helper()
	var ae *ApplyError
	if !assert.ErrorAs(t, err, &ae, "fault %d: Apply = %v, want an ApplyError for the fault", k, err) ||
		!assert.ErrorIs(t, err, errFault, "fault %d: Apply, want an ApplyError for the fault", k) {
		return
	}
	if !assert.Equal(t, want.step, ae.Step, "fault %d: error names %s %q, want %s %q", k, ae.Step, ae.Path, want.step, want.path) ||
		!assert.Equal(t, want.path, ae.Path, "fault %d: error names %s %q, want %s %q", k, ae.Step, ae.Path, want.step, want.path) {
		return
	}
	assert.NoError(t, ae.UndoErr, "fault %d: undo failed", k)
}

// TestApplyPanicAndCancel: a panic inside Apply (host side or inside the
// namespace) and a context cancelled part-way also take everything back.
func TestApplyPanicAndCancel(t *testing.T) {
	if !inPrivateNS(t) {
		return
	}
	h := newTestHost(t)
	p := h.testPlan(t, fedoraLayout, 2)
	all, ft := faultPoints(t, h, p)
	for _, k := range []int{indexOf(all, StepCgroup), indexOf(all, StepMount) + 5, len(all) - 1} {
		var seen []point
		assert.Panics(t, func() {
			p.Apply(context.Background(), ctrOf(ft.c), faultAt(k, &seen, func(point) error { panic("boom") }))
		}, "point %d: no panic", k)
		ft.unchanged(t, fmt.Sprintf("panic at %d", k))
		ctx, cancel := context.WithCancel(context.Background())
		err := p.Apply(ctx, ctrOf(ft.c), faultAt(k, &seen, func(point) error { cancel(); return nil }))
		assert.ErrorIs(t, err, context.Canceled, "cancelled at %d: Apply", k)
		ft.unchanged(t, fmt.Sprintf("cancel at %d", k))
	}
	ft.host.check(t)
}

func indexOf(points []point, s Step) int {
	for i, p := range points {
		if p.step == s {
			return i
		}
	}
	return -1
}
