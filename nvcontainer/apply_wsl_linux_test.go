package nvcontainer

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-nvc/nvc/devices"
	"github.com/go-nvc/nvc/driver"
	"github.com/go-nvc/nvc/internal/fakehost"
	"github.com/go-nvc/nvc/internal/testutil"
	"github.com/go-nvc/nvc/nvcontainer/request"
)

// newWSLTestHost generates a simulated WSL2 host with a real /dev/dxg
// and discovers it.
func newWSLTestHost(tb testing.TB) *testHost {
	tb.Helper()
	testutil.RequireRoot(tb)
	h, err := fakehost.GenerateWSL(tb.TempDir(), &fakehost.WSLOptions{RealNodes: true})
	require.NoError(tb, err)
	roots := driver.Roots{Driver: h.Root, Proc: h.ProcRoot, Dev: h.DevRoot}
	d, err := driver.Open(&driver.Options{Roots: roots})
	require.NoError(tb, err)
	devs, err := devices.Discover(context.Background(), &devices.Options{Roots: roots})
	require.NoError(tb, err)
	return &testHost{Host: h, host: &Host{Driver: d, Devices: devs}}
}

// wslPlan is the plan of every capability for a Debian image.
func (h *testHost) wslPlan(tb testing.TB) *Plan {
	tb.Helper()
	req, err := request.FromEnv([]string{"NVIDIA_VISIBLE_DEVICES=all", "NVIDIA_DRIVER_CAPABILITIES=all"})
	require.NoError(tb, err)
	p, err := NewPlan(h.host, req, Container{Rootfs: newRootfs(tb, debianLayout)}, nil)
	require.NoError(tb, err)
	return p
}

// TestApplyWSL applies a WSL2 plan to a container: /dev/dxg is the host's
// node, the driver store files are bound read-only at their own paths,
// nvidia-smi is linked from /usr/bin, and the program that needs
// libcuda.so.1 runs (the loader finds it through the cache Apply wrote).
// Nothing outside the rootfs changes.
func TestApplyWSL(t *testing.T) {
	if !inPrivateNS(t) {
		return
	}
	h := newWSLTestHost(t)
	p := h.wslPlan(t)
	c := startIn(t, debianLayout, false)
	host := recordHost(t, h.Root)
	require.NoError(t, p.Apply(context.Background(), ctrOf(c), nil))
	host.check(t)
	out, err := c.Exec(t, "sh", "-c", "cd "+c.Rootfs+" && ls -l dev/dxg && readlink usr/bin/nvidia-smi && readlink ."+fakehost.WSLStoreDir+"/libcuda.so.1")
	require.NoError(t, err, out)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	require.Len(t, lines, 3, "%s", out)
	assert.Regexp(t, `^c.* 10, +127 `, lines[0], "/dev/dxg in the container")
	assert.Equal(t, fakehost.WSLStoreDir+"/nvidia-smi", lines[1], "/usr/bin/nvidia-smi")
	assert.Equal(t, "libcuda.so.1.1", lines[2], "the store's libcuda.so.1")
	m := c.MountAt(t, fakehost.WSLStoreDir+"/libcuda.so.1.1")
	if assert.NotNil(t, m, "libcuda.so.1.1 not bound") {
		assert.Contains(t, strings.Split(m.Options, ","), "ro", "libcuda.so.1.1 mount options %s", m.Options)
	}
	rc, out := runProg(t, c)
	assert.Equal(t, 0, rc, "the program that needs libcuda.so.1: %s", out)
}

// wslHostile are image layouts aimed at the WSL mounts and links: the
// store's dirs, its SONAME link and the nvidia-smi link point at the
// host. In spec, DECOY is the decoy's host path and UP/ a run of "../".
var wslHostile = []hostile{
	{name: "wsl-abs", spec: "dir usr/lib\nsymlink usr/lib/wsl DECOY/dir", fail: true},
	{name: "wsl-dotdot", spec: "dir usr/lib\nsymlink usr/lib/wsl UP/DECOY/dir", fail: true},
	{name: "drivers-abs", spec: "dir usr/lib/wsl\nsymlink usr/lib/wsl/drivers DECOY", fail: true},
	{name: "store-dotdot", spec: "dir usr/lib/wsl/drivers\nsymlink ." + fakehost.WSLStoreDir + " UP/DECOY/dir", fail: true},
	{name: "store-file-symlink", spec: "symlink ." + fakehost.WSLStoreDir + "/nvcubins.bin DECOY/file", fail: true, is: ErrWrongType},
	{name: "store-soname-symlink", spec: "symlink ." + fakehost.WSLStoreDir + "/libcuda.so.1 DECOY/file"}, // replaced, not followed
	{name: "smi-link-abs", spec: "symlink usr/bin/nvidia-smi DECOY/file"},                                 // an extra link: kept
	{name: "dxg-symlink", spec: "symlink dev/dxg DECOY/nvidia0", fail: true, is: ErrWrongType},
}

// TestApplyWSLHostile: for each layout, nothing outside the rootfs is
// written or mounted on, and a failing Apply leaves the container as it
// was.
func TestApplyWSLHostile(t *testing.T) {
	if !inPrivateNS(t) {
		return
	}
	h := newWSLTestHost(t)
	p := h.wslPlan(t)
	for _, tc := range wslHostile {
		t.Run(tc.name, func(t *testing.T) {
			tc.layout = debianLayout
			decoy := testutil.RootTree(t, decoySpec)
			c := startHostile(t, tc, decoy)
			err := applyHostile(t, h, c, p, decoy)
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
