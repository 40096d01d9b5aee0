package nvcontainer

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/moby/sys/mountinfo"
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
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv(envOldKernel, file) // the child inherits it
	container.InPrivateMountNS(t)
}

func oldKernelChild(t *testing.T, file string) {
	var p Plan
	if err := json.Unmarshal([]byte(readFile(t, file)), &p); err != nil {
		t.Fatal(err)
	}
	c := startIn(t, fedoraLayout, false)
	host := recordHost(t, filepath.Dir(file))
	if err := container.DenyNewerSyscalls(); err != nil {
		t.Fatal(err)
	}
	if mount.HasNewAPI() {
		t.Fatal("the new mount API is still there")
	}
	if err := p.Apply(context.Background(), ctrOf(c), nil); err != nil {
		t.Fatal(err)
	}
	host.check(t)
	for _, e := range checkApplied(c, &p) {
		t.Error(e)
	}
	if rc, out := runProg(t, c); rc != 0 {
		t.Errorf("%s: exit %d: %s", cudaProg, rc, out)
	}
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
	if err != nil || !strings.Contains(string(out), "--- PASS: TestApplyRootfsOnly") {
		t.Errorf("child: %v\n%s", err, out)
	}
}

func rootfsOnlyChild(t *testing.T) {
	h := newTestHost(t)
	p := h.testPlan(t, debianLayout, 8)
	dir := newRootfs(t, debianLayout)
	t.Cleanup(func() { unmountBelow(t, dir) })
	err := p.Apply(context.Background(), Container{Rootfs: dir, Mode: ModeRootfsOnly}, nil)
	if !errors.Is(err, ErrNoProcess) {
		t.Fatalf("Apply with cgroup rules and no process = %v, want ErrNoProcess", err)
	}
	p.CgroupRules = nil
	before, err := mountinfo.GetMounts(nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Apply(context.Background(), Container{Rootfs: dir, Mode: ModeRootfsOnly}, nil); err != nil {
		t.Fatal(err)
	}
	self := &container.Container{PID: os.Getpid(), Rootfs: dir, HostRootfs: dir}
	added := newMounts(before, self.MountInfo(t))
	if len(added) != mountCount(p) {
		t.Errorf("%d new mounts, want %d", len(added), mountCount(p))
	}
	for _, m := range added {
		if !strings.HasPrefix(m, dir+"/") {
			t.Errorf("mount at %s, outside the rootfs %s", m, dir)
		}
	}
	for _, e := range checkApplied(self, p) {
		t.Error(e)
	}
}

// unmountBelow detaches every mount of this process below dir, topmost
// first.
func unmountBelow(t *testing.T, dir string) {
	mounts, err := mountinfo.GetMounts(mountinfo.PrefixFilter(dir))
	if err != nil {
		t.Fatal(err)
	}
	for i := len(mounts) - 1; i >= 0; i-- {
		err := unix.Unmount(mounts[i].Mountpoint, unix.MNT_DETACH)
		if err != nil && err != unix.ENOENT && err != unix.EINVAL {
			t.Errorf("unmounting %s: %v", mounts[i].Mountpoint, err)
		}
	}
}
