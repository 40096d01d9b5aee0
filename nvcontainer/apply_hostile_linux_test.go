package nvcontainer

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/go-nvc/nvc/internal/testutil"
	"github.com/go-nvc/nvc/internal/testutil/container"
)

// decoySpec is a host directory that a hostile image points its symlinks
// at; nothing in it may change.
const decoySpec = `
file file "host file"
file ld.so.cache "host cache"
file debian_version "host"
dir  dir
char nvidia0 195 0 0666
`

// hostile is one hostile rootfs layout. In spec, DECOY is the decoy's
// absolute host path and UP/ a long run of "../".
type hostile struct {
	name   string
	layout Layout
	remove []string // removed from the image before spec is built
	spec   string
	fail   bool  // Apply must fail
	is     error // and match this, when not nil
}

// hostileLayouts are acceptance 3's layouts (the race and a rootfs that is
// itself a symlink have their own tests).
var hostileLayouts = []hostile{
	{name: "libdir-abs", remove: []string{"usr/lib64"}, spec: "symlink usr/lib64 DECOY", fail: true},
	{name: "libdir-dotdot", remove: []string{"usr/lib64"}, spec: "symlink usr/lib64 UP/DECOY", fail: true},
	{name: "libdir-debian-dotdot", layout: debianLayout, remove: []string{"usr/lib/x86_64-linux-gnu"}, spec: "symlink usr/lib/x86_64-linux-gnu ../../UP/DECOY/dir", fail: true},
	{name: "lib32dir-abs", spec: "symlink usr/lib32 DECOY/dir", fail: true},
	{name: "usr-bin-abs", remove: []string{"usr/bin"}, spec: "symlink usr/bin DECOY", fail: true},
	{name: "usr-bin-dotdot", remove: []string{"usr/bin"}, spec: "symlink usr/bin ../UP/DECOY/dir", fail: true},
	{name: "usr-dotdot", remove: []string{"usr"}, spec: "symlink usr UP/DECOY", fail: true},
	{name: "etc-abs", remove: []string{"etc"}, spec: "symlink etc DECOY", fail: true},
	{name: "etc-dotdot", remove: []string{"etc"}, spec: "symlink etc UP/DECOY/dir", fail: true},
	{name: "dev-abs", remove: []string{"dev"}, spec: "symlink dev DECOY", fail: true},
	{name: "dev-dotdot", remove: []string{"dev"}, spec: "symlink dev UP/DECOY", fail: true},
	{name: "proc-abs", remove: []string{"proc"}, spec: "symlink proc DECOY", fail: true},
	{name: "proc-driver-dotdot", spec: "symlink proc/driver UP/DECOY", fail: true},
	{name: "proc-driver-nvidia-symlink", spec: "dir proc/driver\nsymlink proc/driver/nvidia DECOY/dir", fail: true, is: ErrWrongType},
	{name: "firmware-abs", spec: "symlink lib/firmware DECOY", fail: true},
	{name: "run-dotdot", spec: "symlink run UP/DECOY", fail: true},
	{name: "ldcache-symlink-abs", remove: []string{"etc/ld.so.cache"}, spec: "symlink etc/ld.so.cache DECOY/ld.so.cache"},
	{name: "ldcache-symlink-dotdot", remove: []string{"etc/ld.so.cache"}, spec: "symlink etc/ld.so.cache UP/DECOY/ld.so.cache"},
	{name: "ldcache-dir", remove: []string{"etc/ld.so.cache"}, spec: "dir etc/ld.so.cache", fail: true, is: ErrWrongType},
	{name: "debian-version-symlink", spec: "symlink etc/debian_version DECOY/debian_version"},
	{name: "target-symlink-lib", spec: "symlink usr/lib64/libcuda.so.550.54.15 DECOY/file", fail: true, is: ErrWrongType},
	{name: "target-symlink-node", spec: "symlink dev/nvidia0 DECOY/nvidia0", fail: true, is: ErrWrongType},
	{name: "target-symlink-link", spec: "symlink usr/lib64/libcuda.so DECOY/file"},  // an extra link: kept
	{name: "soname-symlink-abs", spec: "symlink usr/lib64/libcuda.so.1 DECOY/file"}, // replaced, not followed
	{name: "soname-symlink-dotdot", spec: "symlink usr/lib64/libnvidia-ml.so.1 UP/DECOY/file"},
	{name: "soname-symlink-dir", spec: "symlink usr/lib64/libcuda.so.1 DECOY/dir"},
	{name: "soname-file", spec: "file usr/lib64/libcuda.so.1 \"image\"", fail: true, is: ErrWrongType},
	{name: "soname-dir", spec: "dir usr/lib64/libcuda.so.1", fail: true, is: ErrWrongType},
	{name: "target-fifo", spec: "fifo usr/bin/nvidia-smi", fail: true, is: ErrWrongType},
	{name: "target-socket", spec: "socket usr/lib64/libnvidia-ml.so.550.54.15", fail: true, is: ErrWrongType},
	{name: "target-dir", spec: "dir usr/lib64/libcuda.so.550.54.15", fail: true, is: ErrWrongType},
	{name: "target-dir-node", spec: "dir dev/nvidiactl", fail: true, is: ErrWrongType},
	{name: "target-other-node", spec: "char dev/nvidia0 1 3", fail: true, is: ErrWrongType},
	{name: "target-file-for-dir", spec: "file tmp/nvidia-mps", fail: true, is: ErrWrongType},
	{name: "gpus-symlink-under-mask", spec: "symlink proc/driver/nvidia/gpus DECOY/dir"},
	{name: "deep-dotdot", remove: []string{"usr/lib64"}, spec: "symlink usr/lib64 " + strings.Repeat("x/../../", 40) + "DECOY/dir", fail: true},
	{name: "symlink-loop", remove: []string{"usr/lib64"}, spec: "symlink usr/lib64 lib64b\nsymlink usr/lib64b lib64", fail: true},
	{name: "libdir-inside", remove: []string{"usr/lib64"}, spec: "dir opt/lib\nsymlink usr/lib64 ../opt/lib"},
}

// TestApplyHostile is acceptance 3: for each layout, nothing outside the
// rootfs is written or mounted on, and a failing Apply leaves the
// container as it was.
func TestApplyHostile(t *testing.T) {
	if !inPrivateNS(t) {
		return
	}
	h := newTestHost(t)
	plans := map[bool]*Plan{true: h.testPlan(t, debianLayout, 8), false: h.testPlan(t, fedoraLayout, 8)}
	require.GreaterOrEqual(t, len(hostileLayouts), 20, "only %d hostile layouts", len(hostileLayouts))
	for _, tc := range hostileLayouts {
		t.Run(tc.name, func(t *testing.T) {
			decoy := testutil.RootTree(t, decoySpec)
			c := startHostile(t, tc, decoy)
			err := applyHostile(t, h, c, plans[tc.layout.Debian], decoy)
			if !tc.fail {
				assert.NoError(t, err, "Apply, want success")
				return
			}
			require.Error(t, err, "Apply succeeded, want an error")
			if tc.is != nil {
				assert.ErrorIs(t, err, tc.is, "Apply")
			}
		})
	}
}

func startHostile(t *testing.T, tc hostile, decoy string) *container.Container {
	t.Helper()
	l := tc.layout
	if l.LibDir == "" {
		l = fedoraLayout
	}
	dir := newRootfs(t, l)
	for _, p := range tc.remove {
		require.NoError(t, os.RemoveAll(filepath.Join(dir, p)))
	}
	up := strings.Repeat("../", 24)
	spec := strings.NewReplacer("UP/DECOY", up+decoy[1:], "DECOY", decoy).Replace(tc.spec)
	testutil.BuildTree(t, dir, spec)
	return container.Start(t, &container.Options{Rootfs: dir})
}

// applyHostile applies p to c and checks what must hold whatever the
// outcome; it returns Apply's error.
func applyHostile(t *testing.T, h *testHost, c *container.Container, p *Plan, decoy string) error {
	t.Helper()
	return applyHostileWith(t, h, c, decoy, func() error {
		return p.Apply(context.Background(), ctrOf(c), nil)
	})
}

func applyHostileWith(t *testing.T, h *testHost, c *container.Container, decoy string, apply func() error) error {
	t.Helper()
	host := recordHost(t, decoy, h.Root)
	before := c.MountInfo(t)
	tree := layoutOf(t, c.HostRootfs)
	err := apply()
	host.check(t)
	after := c.MountInfo(t)
	for _, m := range newMounts(before, after) {
		assert.True(t, strings.HasPrefix(m, c.Rootfs+"/"), "mount at %s, outside the rootfs %s", m, c.Rootfs)
	}
	if err != nil {
		assert.Empty(t, newMounts(before, after), "Apply failed (%v) but left mounts", err)
		assert.Equal(t, tree, layoutOf(t, c.HostRootfs), "Apply failed (%v) but changed the rootfs", err)
	}
	return err
}

// layoutOf is the tree at root without times (container.Layout).
func layoutOf(t *testing.T, root string) string {
	t.Helper()
	return container.Layout(t, root)
}

// TestApplyRootfsSymlink refuses a rootfs path that is itself a symlink
// (to a real rootfs), and changes nothing.
func TestApplyRootfsSymlink(t *testing.T) {
	if !inPrivateNS(t) {
		return
	}
	h := newTestHost(t)
	p := h.testPlan(t, fedoraLayout, 8)
	decoy := testutil.RootTree(t, decoySpec)
	c := startIn(t, fedoraLayout, false)
	link := filepath.Join(t.TempDir(), "rootfs")
	require.NoError(t, os.Symlink(c.Rootfs, link))
	host := recordHost(t, decoy, h.Root)
	before := c.MountInfo(t)
	tree := layoutOf(t, c.HostRootfs)
	err := p.Apply(context.Background(), Container{PID: c.PID, Rootfs: link}, nil)
	var ae *ApplyError
	if assert.ErrorAs(t, err, &ae, "Apply on a symlinked rootfs = %v, want a failed %s step", err, StepEnter) {
		assert.Equal(t, StepEnter, ae.Step, "Apply on a symlinked rootfs = %v", err)
	}
	host.check(t)
	assert.Empty(t, newMounts(before, c.MountInfo(t)), "a refused Apply changed the container: mounts")
	assert.Equal(t, tree, layoutOf(t, c.HostRootfs), "a refused Apply changed the container's tree")
}

// TestApplyRace swaps directories of the image for symlinks to the host
// (renameat2 RENAME_EXCHANGE, in a loop on another goroutine) while Apply
// runs: whatever Apply decides, nothing outside the rootfs is written or
// mounted on, and a failed Apply leaves the container as it was.
func TestApplyRace(t *testing.T) {
	if !inPrivateNS(t) {
		return
	}
	h := newTestHost(t)
	p := h.testPlan(t, fedoraLayout, 8)
	decoy := testutil.RootTree(t, decoySpec)
	spec := "dir proc/driver\nsymlink usr/lib64.swap DECOY/dir\nsymlink dev.swap DECOY\nsymlink proc/driver.swap UP/DECOY"
	names := []string{"usr/lib64", "dev", "proc/driver"}
	failed, swaps := 0, 0
	for i := range 12 {
		c := startHostile(t, hostile{spec: spec}, decoy)
		err := applyHostileWith(t, h, c, decoy, func() error {
			stop, done := make(chan struct{}), make(chan int)
			go swapLoop(c.HostRootfs, names, time.Duration(i)*time.Duration(i)*400*time.Microsecond, stop, done)
			defer func() { close(stop); swaps += <-done }()
			return p.Apply(context.Background(), ctrOf(c), nil)
		})
		if err != nil {
			failed++
		}
	}
	t.Logf("%d of 12 Apply calls failed, %d swaps", failed, swaps)
}

// swapLoop exchanges each name with name.swap, pausing for pause between
// exchanges, until stop is closed; then it leaves every pair as it found
// it and sends the number of exchanges.
func swapLoop(root string, names []string, pause time.Duration, stop <-chan struct{}, done chan<- int) {
	n := 0
	state := make([]bool, len(names))
	for i := 0; ; i = (i + 1) % len(names) {
		select {
		case <-stop:
			for j, swapped := range state {
				if swapped {
					exchange(root, names[j])
				}
			}
			done <- n
			return
		default:
		}
		if pause > 0 {
			time.Sleep(pause)
		}
		if exchange(root, names[i]) == nil {
			state[i] = !state[i]
			n++
		}
	}
}

func exchange(root, name string) error {
	a, b := filepath.Join(root, name), filepath.Join(root, name+".swap")
	return unix.Renameat2(unix.AT_FDCWD, a, unix.AT_FDCWD, b, unix.RENAME_EXCHANGE)
}
