package nvcontainer

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/moby/sys/mountinfo"
	"golang.org/x/sys/unix"

	"github.com/go-nvc/nvc/internal/testutil/container"
)

// TestApply is acceptance 1 and 2: a plan for an 8-GPU host with every
// capability, applied to real containers in Debian and Fedora layouts,
// pivoted or as an OCI hook sees them, with both mount methods, and
// checked from inside; the host stays untouched.
func TestApply(t *testing.T) {
	if !inPrivateNS(t) {
		return
	}
	h := newTestHost(t)
	for _, tc := range []struct {
		name   string
		layout Layout
		pivot  bool
		legacy bool
	}{
		{"debian/pivoted", debianLayout, true, false},
		{"fedora/pivoted", fedoraLayout, true, false},
		{"debian/hook", debianLayout, false, false},
		{"fedora/hook", fedoraLayout, false, false},
		{"fedora/hook/legacy", fedoraLayout, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			testApply(t, h, tc.layout, tc.pivot, tc.legacy)
		})
	}
}

func testApply(t *testing.T, h *testHost, l Layout, pivot, legacy bool) {
	p := h.testPlan(t, l, 8)
	c := startIn(t, l, pivot)
	twin := startIn(t, l, pivot)
	oldCache := readFile(t, c.Path("etc/ld.so.cache"))
	before := c.MountInfo(t)
	host := recordHost(t, h.Root)
	if err := p.Apply(context.Background(), ctrOf(c), &ApplyOptions{LegacyMounts: legacy}); err != nil {
		t.Fatal(err)
	}
	host.check(t)
	for _, e := range checkApplied(c, p) {
		t.Error(e)
	}
	checkMountsInside(t, c, before, mountCount(p))
	checkFromInside(t, c, p)
	if rc, out := runProg(t, c); rc != 0 {
		t.Errorf("%s in the configured container: exit %d: %s", cudaProg, rc, out)
	}
	if rc, out := runProg(t, twin); rc != 127 {
		t.Errorf("%s in the unconfigured twin: exit %d, want 127: %s", cudaProg, rc, out)
	}
	if !l.Debian {
		// /usr/lib64 is only in the cache we wrote: with the image's
		// cache back, the loader no longer finds libcuda.so.1.
		if err := os.WriteFile(c.Path("etc/ld.so.cache"), []byte(oldCache), 0o644); err != nil {
			t.Fatal(err)
		}
		if rc, out := runProg(t, c); rc != 127 {
			t.Errorf("%s with the image's own cache: exit %d, want 127: %s", cudaProg, rc, out)
		}
	}
}

func mountCount(p *Plan) int {
	n := len(p.Mounts)
	for _, t := range p.Tmpfs {
		n += 1 + len(t.Mounts)
	}
	return n
}

// checkMountsInside checks that Apply added exactly want mounts to c, all
// inside its rootfs.
func checkMountsInside(t *testing.T, c *container.Container, before []*mountinfo.Info, want int) {
	t.Helper()
	added := newMounts(before, c.MountInfo(t))
	if len(added) != want {
		t.Errorf("%d new mounts, want %d", len(added), want)
	}
	for _, m := range added {
		if !strings.HasPrefix(m, strings.TrimSuffix(c.Rootfs, "/")+"/") {
			t.Errorf("mount at %s, outside the rootfs %s", m, c.Rootfs)
		}
	}
}

// checkFromInside runs busybox in the container to read what a workload
// would.
func checkFromInside(t *testing.T, c *container.Container, p *Plan) {
	t.Helper()
	root := strings.TrimSuffix(c.Rootfs, "/")
	out, err := c.Exec(t, "ls", root+"/proc/driver/nvidia/gpus")
	if got := strings.Fields(out); err != nil || len(got) != len(p.GPUs) {
		t.Errorf("ls /proc/driver/nvidia/gpus in the container: %q, %v; want %d GPUs", out, err, len(p.GPUs))
	}
	out, err = c.Exec(t, "grep", "ModifyDeviceFiles", root+"/proc/driver/nvidia/params")
	if err != nil || !strings.Contains(out, "ModifyDeviceFiles: 0") {
		t.Errorf("params in the container: %q, %v", out, err)
	}
	out, err = c.Exec(t, "stat", "-c", "%t:%T", root+"/dev/nvidia7")
	if err != nil || strings.TrimSpace(out) != "c3:7" {
		t.Errorf("stat /dev/nvidia7 in the container: %q, %v; want c3:7 (195:7 in hex)", out, err)
	}
	out, err = c.Exec(t, "sh", "-c", "echo x > "+root+"/usr/bin/nvidia-smi")
	if err == nil || !strings.Contains(out, "Read-only") {
		t.Errorf("writing nvidia-smi in the container: %q, %v; want a read-only file system", out, err)
	}
}

// TestApplyOwner checks that what Apply creates belongs to the owner of
// /proc/PID, as with libnvidia-container.
func TestApplyOwner(t *testing.T) {
	h := newTestHost(t)
	p := h.testPlan(t, fedoraLayout, 1)
	c := container.Start(t, &container.Options{Rootfs: newRootfs(t, fedoraLayout), UID: 1000, GID: 1001})
	if err := p.Apply(context.Background(), ctrOf(c), nil); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"lib/firmware/nvidia", "usr/share/glvnd", "usr/lib64/libcuda.so"} {
		var st unix.Stat_t
		if err := unix.Lstat(c.Path(p), &st); err != nil || st.Uid != 1000 || st.Gid != 1001 {
			t.Errorf("%s: owner %d:%d (%v), want 1000:1001", p, st.Uid, st.Gid, err)
		}
	}
}
