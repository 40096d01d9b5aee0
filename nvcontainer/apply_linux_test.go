package nvcontainer

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/moby/sys/mountinfo"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
	require.NoError(t, p.Apply(context.Background(), ctrOf(c), &ApplyOptions{LegacyMounts: legacy}))
	host.check(t)
	assert.Empty(t, checkApplied(c, p), "the configured container")
	checkMountsInside(t, c, before, mountCount(p))
	checkFromInside(t, c, p)
	rc, out := runProg(t, c)
	assert.Equal(t, 0, rc, "%s in the configured container: exit status: %s", cudaProg, out)
	rc, out = runProg(t, twin)
	assert.Equal(t, 127, rc, "%s in the unconfigured twin: exit status: %s", cudaProg, out)
	if !l.Debian {
		// /usr/lib64 is only in the cache we wrote: with the image's
		// cache back, the loader no longer finds libcuda.so.1.
		require.NoError(t, os.WriteFile(c.Path("etc/ld.so.cache"), []byte(oldCache), 0o644))
		rc, out := runProg(t, c)
		assert.Equal(t, 127, rc, "%s with the image's own cache: exit status: %s", cudaProg, out)
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
	assert.Len(t, added, want, "new mounts")
	for _, m := range added {
		assert.True(t, strings.HasPrefix(m, strings.TrimSuffix(c.Rootfs, "/")+"/"), "mount at %s, outside the rootfs %s", m, c.Rootfs)
	}
}

// checkFromInside runs busybox in the container to read what a workload
// would.
func checkFromInside(t *testing.T, c *container.Container, p *Plan) {
	t.Helper()
	root := strings.TrimSuffix(c.Rootfs, "/")
	out, err := c.Exec(t, "ls", root+"/proc/driver/nvidia/gpus")
	assert.NoError(t, err, "ls /proc/driver/nvidia/gpus in the container: %q", out)
	assert.Len(t, strings.Fields(out), len(p.GPUs), "ls /proc/driver/nvidia/gpus in the container: want one entry per GPU")
	out, err = c.Exec(t, "grep", "ModifyDeviceFiles", root+"/proc/driver/nvidia/params")
	assert.NoError(t, err, "params in the container: %q", out)
	assert.Contains(t, out, "ModifyDeviceFiles: 0", "params in the container")
	out, err = c.Exec(t, "stat", "-c", "%t:%T", root+"/dev/nvidia7")
	assert.NoError(t, err, "stat /dev/nvidia7 in the container: %q", out)
	assert.Equal(t, "c3:7", strings.TrimSpace(out), "stat /dev/nvidia7 in the container: want c3:7 (195:7 in hex)")
	out, err = c.Exec(t, "sh", "-c", "echo x > "+root+"/usr/bin/nvidia-smi")
	assert.Error(t, err, "writing nvidia-smi in the container: %q; want a read-only file system", out)
	assert.Contains(t, out, "Read-only", "writing nvidia-smi in the container: want a read-only file system")
}

// TestApplyOwner checks that what Apply creates belongs to the owner of
// /proc/PID, as with libnvidia-container.
func TestApplyOwner(t *testing.T) {
	h := newTestHost(t)
	p := h.testPlan(t, fedoraLayout, 1)
	c := container.Start(t, &container.Options{Rootfs: newRootfs(t, fedoraLayout), UID: 1000, GID: 1001})
	require.NoError(t, p.Apply(context.Background(), ctrOf(c), nil))
	for _, p := range []string{"lib/firmware/nvidia", "usr/share/glvnd", "usr/lib64/libcuda.so"} {
		var st unix.Stat_t
		if assert.NoError(t, unix.Lstat(c.Path(p), &st), "%s", p) {
			assert.Equal(t, [2]uint32{1000, 1001}, [2]uint32{st.Uid, st.Gid}, "%s: owner uid:gid", p)
		}
	}
}

// TestApplyTmpfsOwner checks the owner of the tmpfs's own entries (its
// root, a file, a directory), made on the host side: chowned to the owner,
// or born with its ids when the creating thread's filesystem ids are the
// owner's (a uid alone matching is not enough).
func TestApplyTmpfsOwner(t *testing.T) {
	h := newTestHost(t)
	p := h.testPlan(t, fedoraLayout, 1)
	for _, o := range []Owner{{0, 0}, {1000, 1001}, {0, 1001}, {1000, 0}} {
		t.Run(fmt.Sprintf("%d:%d", o.UID, o.GID), func(t *testing.T) {
			c := startIn(t, fedoraLayout, true)
			require.NoError(t, p.Apply(context.Background(), ctrOf(c), &ApplyOptions{Owner: &o}))
			want := fmt.Sprintf("%d:%d", o.UID, o.GID)
			for _, f := range []string{"/proc/driver/nvidia", "/proc/driver/nvidia/params", "/proc/driver/nvidia/gpus"} {
				out, err := c.Exec(t, "stat", "-c", "%u:%g", f)
				require.NoError(t, err, "stat %s in the container: %q", f, out)
				assert.Equal(t, want, strings.TrimSpace(out), "owner of %s", f)
			}
		})
	}
}
