package nvcontainer

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-nvc/nvc/internal/elfwriter"
	"github.com/go-nvc/nvc/internal/testutil"
	"github.com/go-nvc/nvc/internal/testutil/container"
	"github.com/go-nvc/nvc/nvcontainer/request"
)

// compatLib is a CUDA forward-compatibility libcuda newer than the test
// host's driver (550.54.15), as NVIDIA's cuda-compat packages ship it.
const (
	compatDir = "usr/local/cuda/compat"
	compatLib = "libcuda.so.560.28.03"
)

// startCompat starts a container whose image has compatLib in compatDir,
// pivoted or as an OCI hook sees it. The library ends in tag, so that each
// container's copy is its own.
func startCompat(t *testing.T, pivot bool, tag string) *container.Container {
	t.Helper()
	dir := newRootfs(t, fedoraLayout)
	testutil.BuildTree(t, dir, "symlink "+compatDir+"/libcuda.so.1 "+compatLib)
	file := filepath.Join(dir, compatDir, compatLib)
	require.NoError(t, elfwriter.WriteFile(file, elfwriter.Library("libcuda.so.1", "libc.so.6"), 0o644))
	f, err := os.OpenFile(file, os.O_APPEND|os.O_WRONLY, 0)
	if err == nil {
		_, err = f.WriteString("\x00" + tag)
		f.Close()
	}
	require.NoError(t, err)
	return container.Start(t, &container.Options{Rootfs: dir, PivotRoot: pivot})
}

// compatMountPlan plans compute in CUDA compat mount mode for c, whose
// rootfs NewPlan inspects through /proc/PID/root.
func compatMountPlan(t *testing.T, h *testHost, c *container.Container) *Plan {
	t.Helper()
	req, err := request.FromEnv([]string{"NVIDIA_VISIBLE_DEVICES=0", "NVIDIA_DRIVER_CAPABILITIES=compute,utility"})
	require.NoError(t, err)
	req.CUDACompatMode = request.CompatMount
	p, err := NewPlan(h.host, req, ctrOf(c), nil)
	require.NoError(t, err)
	require.True(t, p.CUDACompat.Used, "the plan does not use the compat library: %+v", p.CUDACompat)
	require.True(t, hasMount(p, fedoraLayout.LibDir, "/"+compatLib), "the plan does not mount the compat library: %+v", p.CUDACompat)
	return p
}

// TestApplyCompatMount: in CUDA compat mount mode, the image's compat
// library is mounted into the library dir from inside the container it is
// applied to (its own file, read-only; the plan was made on a template
// container of the same layout), for a hook-time and a pivoted container,
// with both mount methods, and libcuda.so.1 then leads the loader to it.
func TestApplyCompatMount(t *testing.T) {
	if !inPrivateNS(t) {
		return
	}
	h := newTestHost(t)
	p := compatMountPlan(t, h, startCompat(t, false, "template"))
	for _, tc := range []struct {
		name          string
		pivot, legacy bool
	}{{"hook", false, false}, {"pivoted", true, false}, {"hook/legacy", false, true}} {
		t.Run(tc.name, func(t *testing.T) {
			c := startCompat(t, tc.pivot, tc.name)
			before := c.MountInfo(t)
			require.NoError(t, p.Apply(context.Background(), ctrOf(c), &ApplyOptions{LegacyMounts: tc.legacy}))
			checkMountsInside(t, c, before, mountCount(p))
			target := fedoraLayout.LibDir + "/" + compatLib
			if m := c.MountAt(t, target); assert.NotNil(t, m, "%s: not mounted, want the compat library read-only", target) {
				assert.Contains(t, strings.Split(m.Options, ","), "ro", "%s: mounted %+v, want the compat library read-only", target, m)
			}
			want := readFile(t, c.Path(compatDir+"/"+compatLib))
			assert.Equal(t, want, readFile(t, c.Path(target)), "%s does not hold the image's compat library", target)
			out, err := c.Exec(t, "sh", "-c", "LD_DEBUG=libs chroot "+c.Rootfs+" "+cudaProg+" 2>&1; echo rc=$?")
			assert.NoError(t, err, "the loader did not load libcuda.so.1 from the library dir:\n%s", out)
			assert.Contains(t, out, "rc=0", "the loader did not load libcuda.so.1 from the library dir")
			assert.Contains(t, out, "/usr/lib64/libcuda.so.1", "the loader did not load libcuda.so.1 from the library dir")
			got, _ := os.Readlink(c.Path(fedoraLayout.LibDir + "/libcuda.so.1"))
			assert.Equal(t, compatLib, got, "libcuda.so.1 -> %q, want the newer compat library", got)
		})
	}
}

// TestApplyCompatSwap is the CVE-2024-0132 / CVE-2025-23359 race: between
// NewPlan and Apply the image swaps its compat dir (or the library) for a
// symlink to a host dir holding a secret under the library's name. Apply
// opens the library inside the rootfs, so it fails and mounts nothing; no
// host file becomes visible in the container.
func TestApplyCompatSwap(t *testing.T) {
	if !inPrivateNS(t) {
		return
	}
	h := newTestHost(t)
	secret := testutil.RootTree(t, decoySpec+"file "+compatLib+" \"HOST SECRET\"\nfile compat/"+compatLib+" \"HOST SECRET\"\n")
	up := strings.Repeat("../", 24)
	for _, tc := range []struct{ name, remove, spec string }{
		{"dir-abs", compatDir, "symlink " + compatDir + " " + secret},
		{"dir-dotdot", compatDir, "symlink " + compatDir + " " + up + secret[1:]},
		{"cuda-abs", "usr/local/cuda", "symlink usr/local/cuda " + secret},
		{"lib-abs", compatDir + "/" + compatLib, "symlink " + compatDir + "/" + compatLib + " " + secret + "/" + compatLib},
		{"lib-fifo", compatDir + "/" + compatLib, "fifo " + compatDir + "/" + compatLib},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := startCompat(t, false, tc.name)
			p := compatMountPlan(t, h, c)
			require.NoError(t, os.RemoveAll(c.Path(tc.remove)))
			testutil.BuildTree(t, c.HostRootfs, tc.spec)
			err := applyHostileWith(t, h, c, secret, func() error {
				return p.Apply(context.Background(), ctrOf(c), nil)
			})
			assert.Error(t, err, "Apply succeeded after the swap, want an error")
			data, _ := os.ReadFile(c.Path(fedoraLayout.LibDir + "/" + compatLib))
			assert.NotContains(t, string(data), "HOST SECRET", "the container reads the host's secret")
		})
	}
}
