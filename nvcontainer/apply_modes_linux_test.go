package nvcontainer

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/moby/sys/mountinfo"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/go-nvc/nvc/internal/mount"
	"github.com/go-nvc/nvc/internal/testutil"
	"github.com/go-nvc/nvc/internal/testutil/container"
)

// envOldKernel gives TestApplyOldKernel's child the plan file to apply.
const envOldKernel = "NVC_APPLY_OLD_KERNEL_PLAN"

// TestApplyOldKernel applies a whole plan on a simulated 4.18 kernel: in a
// child of the test binary the newer system calls fail with ENOSYS. Apply
// must fall back to binding by path and to pathrs-lite, and still get it
// right. The parent generates the host and the plan, so that no package
// has probed the kernel in the child before the calls are denied (the
// probes are cached per process, as they may be on a real kernel).
func TestApplyOldKernel(t *testing.T) {
	testutil.RequireRoot(t)
	if file := os.Getenv(envOldKernel); file != "" {
		oldKernelChild(t, file)
		return
	}
	h := newTestHost(t)
	p := h.testPlan(t, fedoraLayout, 8)
	file := filepath.Join(t.TempDir(), "plan.json")
	b, err := json.Marshal(p)
	if err == nil {
		err = os.WriteFile(file, b, 0o644)
	}
	require.NoError(t, err)
	t.Setenv(envOldKernel, file) // the child inherits it
	container.InPrivateMountNS(t)
}

func oldKernelChild(t *testing.T, file string) {
	var p Plan
	require.NoError(t, json.Unmarshal([]byte(readFile(t, file)), &p))
	c := startIn(t, fedoraLayout, false)
	host := recordHost(t, filepath.Dir(file))
	require.NoError(t, container.DenyNewerSyscalls())
	require.False(t, mount.HasNewAPI(), "the new mount API is still there")
	require.NoError(t, p.Apply(context.Background(), ctrOf(c), nil))
	host.check(t)
	assert.Empty(t, checkApplied(c, &p), "the container applied to on an old kernel")
	rc, out := runProg(t, c)
	assert.Equal(t, 0, rc, "%s: exit status: %s", cudaProg, out)
}

// envRootfsOnly makes TestApplyRootfsOnly's child do the work.
const envRootfsOnly = "NVC_APPLY_ROOTFS_ONLY"

// TestApplyRootfsOnly applies a plan to a rootfs directory with no
// process (PID 0), in the caller's own mount namespace: a child of the
// test binary run by unshare(1) in a private mount namespace.
func TestApplyRootfsOnly(t *testing.T) {
	testutil.RequireRoot(t)
	if os.Getenv(envRootfsOnly) == "1" {
		rootfsOnlyChild(t)
		return
	}
	unshare := testutil.RequireCommand(t, "unshare")
	cmd := exec.Command(unshare, "--mount", "--propagation", "private", os.Args[0], "-test.run=^TestApplyRootfsOnly$", "-test.v")
	cmd.Env = append(os.Environ(), envRootfsOnly+"=1")
	out, err := cmd.CombinedOutput()
	assert.NoError(t, err, "child:\n%s", out)
	assert.Contains(t, string(out), "--- PASS: TestApplyRootfsOnly", "child")
}

func rootfsOnlyChild(t *testing.T) {
	h := newTestHost(t)
	p := h.testPlan(t, debianLayout, 8)
	dir := newRootfs(t, debianLayout)
	t.Cleanup(func() { unmountBelow(t, dir) })
	err := p.Apply(context.Background(), Container{Rootfs: dir, Mode: ModeRootfsOnly}, nil)
	require.ErrorIs(t, err, ErrNoProcess, "Apply with cgroup rules and no process")
	p.CgroupRules = nil
	before, err := mountinfo.GetMounts(nil)
	require.NoError(t, err)
	require.NoError(t, p.Apply(context.Background(), Container{Rootfs: dir, Mode: ModeRootfsOnly}, nil))
	self := &container.Container{PID: os.Getpid(), Rootfs: dir, HostRootfs: dir}
	added := newMounts(before, self.MountInfo(t))
	assert.Len(t, added, mountCount(p), "new mounts")
	for _, m := range added {
		assert.True(t, strings.HasPrefix(m, dir+"/"), "mount at %s, outside the rootfs %s", m, dir)
	}
	assert.Empty(t, checkApplied(self, p), "the rootfs applied to")
}

// unmountBelow detaches every mount of this process below dir, topmost
// first.
func unmountBelow(t *testing.T, dir string) {
	mounts, err := mountinfo.GetMounts(mountinfo.PrefixFilter(dir))
	require.NoError(t, err)
	for i := len(mounts) - 1; i >= 0; i-- {
		err := unix.Unmount(mounts[i].Mountpoint, unix.MNT_DETACH)
		if err != unix.ENOENT && err != unix.EINVAL {
			assert.NoError(t, err, "unmounting %s", mounts[i].Mountpoint)
		}
	}
}
