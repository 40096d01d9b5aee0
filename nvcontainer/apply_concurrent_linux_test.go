package nvcontainer

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"

	"github.com/moby/sys/mountinfo"
	"github.com/stretchr/testify/assert"

	"github.com/go-nvc/nvc/internal/testutil"
	"github.com/go-nvc/nvc/internal/testutil/container"
)

// TestApplyConcurrent is acceptance 5: 64 containers configured at once,
// 20 rounds (2 with -short). Every container gets the whole plan, and once
// the containers are gone the host has no extra mount and no thread in a
// foreign mount namespace.
func TestApplyConcurrent(t *testing.T) {
	if !inPrivateNS(t) {
		return
	}
	h := newTestHost(t)
	p := h.testPlan(t, fedoraLayout, 8)
	host := recordHost(t, h.Root)
	rounds, n := 20, 64
	if testing.Short() {
		rounds = 2
	}
	for r := range rounds {
		t.Run(fmt.Sprintf("round%d", r), func(t *testing.T) {
			applyConcurrently(t, p, n)
		})
		host.check(t)
		if t.Failed() {
			return
		}
	}
}

func applyConcurrently(t *testing.T, p *Plan, n int) {
	cs := make([]*container.Container, n)
	before := make([][]*mountinfo.Info, n)
	for i := range cs {
		dir := memDir(t)
		testutil.BuildTree(t, dir, rootfsSpec(fedoraLayout))
		cs[i] = container.Start(t, &container.Options{Rootfs: dir})
		before[i] = cs[i].MountInfo(t)
	}
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i, c := range cs {
		wg.Go(func() { errs[i] = p.Apply(context.Background(), ctrOf(c), nil) })
	}
	wg.Wait()
	for i, c := range cs {
		if !assert.NoError(t, errs[i], "container %d", i) {
			continue
		}
		assert.Empty(t, checkApplied(c, p), "container %d", i)
		assert.Equal(t, mountCount(p), len(newMounts(before[i], c.MountInfo(t))), "container %d: new mounts", i)
	}
}

// memDir is a new directory on /dev/shm (tmpfs), removed when t ends, or
// t.TempDir where there is none: 64 rootfs trees with a hundred
// placeholders each are made faster there, and what is tested here is
// concurrency, not the file system.
func memDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("/dev/shm", "nvc-apply-")
	if err != nil {
		return t.TempDir()
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}
