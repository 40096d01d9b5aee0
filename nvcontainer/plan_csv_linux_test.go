package nvcontainer

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-nvc/nvc/devices"
	"github.com/go-nvc/nvc/driver"
	"github.com/go-nvc/nvc/internal/fakehost"
	"github.com/go-nvc/nvc/internal/testutil"
	"github.com/go-nvc/nvc/internal/testutil/container"
	"github.com/go-nvc/nvc/nvcontainer/request"
	"github.com/go-nvc/nvc/tegra"
)

// csvHost generates the simulated Jetson Orin (real nodes) and opens it
// with the files a container whose NVIDIA_REQUIRE_JETPACK is jetpack
// reads.
func csvHost(t *testing.T, jetpack string) (*fakehost.TegraHost, *CSVHost) {
	t.Helper()
	testutil.RequireRoot(t)
	fh, err := fakehost.GenerateTegra(t.TempDir(), &fakehost.TegraOptions{RealNodes: true})
	require.NoError(t, err)
	files, err := tegra.Files(fh.Root, tegra.DefaultMountSpecPath)
	require.NoError(t, err)
	h, err := OpenCSVHost(driver.Roots{Driver: fh.Root}, fh.Root, tegra.SelectFiles(files, jetpack))
	require.NoError(t, err)
	return fh, h
}

func csvRequest(t *testing.T, env ...string) *request.Request {
	t.Helper()
	req, err := request.FromEnv(append([]string{"NVIDIA_VISIBLE_DEVICES=all"}, env...))
	require.NoError(t, err)
	return req
}

// TestNewCSVPlan: the base files' dir, libraries, nodes (with a cgroup
// rule each), links and loader cache dirs; the extra file only with
// csv-mounts=all; the options and device IDs.
func TestNewCSVPlan(t *testing.T) {
	fh, h := csvHost(t, "")
	assert.Equal(t, fakehost.TegraRelease, h.Release)
	p, err := NewCSVPlan(h, csvRequest(t), Container{}, nil)
	require.NoError(t, err)
	lib := fakehost.TegraLibDir
	assert.True(t, p.Layout.HostPaths)
	assert.Equal(t, []PlannedGPU{{Index: 0}}, p.GPUs)
	require.NotEmpty(t, p.Mounts)
	assert.Equal(t, Mount{Kind: MountDirectory, Source: fh.Root + "/usr/lib/aarch64-linux-gnu/tegra-egl",
		Target: "/usr/lib/aarch64-linux-gnu/tegra-egl", Options: []string{"ro", "nosuid", "nodev"}, Dir: true}, p.Mounts[0])
	m, ok := findCSVMount(p, "/dev/nvmap")
	require.True(t, ok)
	assert.Equal(t, Mount{Kind: MountDevice, Source: fh.Root + "/dev/nvmap", Target: "/dev/nvmap", Options: deviceOpts,
		Device: &DeviceNumber{Major: fakehost.MajorMisc, Minor: 121}, For: CSVDevice}, m)
	_, ok = findCSVMount(p, lib+"/libcuda.so.1.1")
	assert.True(t, ok)
	_, ok = findCSVMount(p, "/usr/lib/aarch64-linux-gnu/libnvinfer.so.8.6.2")
	assert.False(t, ok, "tensorrt.csv is read only with csv-mounts=all")
	assert.Len(t, p.CgroupRules, 11)
	assert.Contains(t, p.CgroupRules, DeviceRule{Type: "c", Major: fakehost.MajorDRM, Minor: 128, Access: "rw"})
	assert.Contains(t, p.Symlinks, Symlink{Path: "/usr/lib/aarch64-linux-gnu/libcuda.so", Target: "tegra/libcuda.so"})
	assert.Equal(t, []string{lib, "/usr/lib/aarch64-linux-gnu"}, p.LDCache.Dirs)
	assert.Len(t, p.Warnings, 1, "the missing /dev/nvhost-dbg-gpu")

	_, all := csvHost(t, tegra.MountsAll)
	p, err = NewCSVPlan(all, csvRequest(t), Container{}, &PlanOptions{NoCgroups: true, NoDevbind: true})
	require.NoError(t, err)
	_, ok = findCSVMount(p, "/usr/lib/aarch64-linux-gnu/libnvinfer.so.8.6.2")
	assert.True(t, ok, "csv-mounts=all reads tensorrt.csv")
	assert.Empty(t, p.CgroupRules)
	assert.Empty(t, mountTargetsOf(p, MountDevice))

	_, err = NewCSVPlan(h, csvRequest(t, "NVIDIA_VISIBLE_DEVICES=1"), Container{}, nil)
	var pe *PlanError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, StageDevice, pe.Stage)
	require.ErrorIs(t, err, devices.ErrUnknownDevice)
	_, err = NewCSVPlan(h, csvRequest(t, "NVIDIA_VISIBLE_DEVICES=void"), Container{}, nil)
	require.ErrorIs(t, err, ErrNotGPUContainer)
	_, err = NewCSVPlan(h, csvRequest(t, "NVIDIA_VISIBLE_DEVICES=0"), Container{Rootfs: "rel"}, nil)
	require.ErrorIs(t, err, ErrInvalidRootfs)
}

// TestOpenCSVHostBadLine: a bad line is an error naming file and line.
func TestOpenCSVHostBadLine(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "drivers.csv")
	require.NoError(t, os.WriteFile(f, []byte("lib, /usr/lib/x.so\nlibs, /usr/lib/y.so\n"), 0o644))
	_, err := OpenCSVHost(driver.Roots{Driver: dir}, "/", []string{f})
	require.ErrorIs(t, err, tegra.ErrSyntax)
	assert.Contains(t, err.Error(), f+":2:")
}

// TestApplyCSV applies a CSV plan to a container: the nodes, libraries,
// dir and links are in the container, the program that needs
// libcuda.so.1 runs through the loader cache, and the host tree is
// unchanged.
func TestApplyCSV(t *testing.T) {
	if !inPrivateNS(t) {
		return
	}
	fh, h := csvHost(t, "")
	c := startIn(t, debianLayout, false)
	p, err := NewCSVPlan(h, csvRequest(t), ctrOf(c), nil)
	require.NoError(t, err)
	hostBefore := container.SnapshotTree(t, fh.Root)

	require.NoError(t, p.Apply(context.Background(), ctrOf(c), nil))

	var st syscall.Stat_t
	require.NoError(t, syscall.Stat(c.Path("/dev/nvgpu/igpu0/ctrl"), &st))
	assert.Equal(t, uint32(syscall.S_IFCHR), st.Mode&syscall.S_IFMT)
	assert.Equal(t, uint64(fakehost.MajorNvgpu)<<8, st.Rdev)
	lib := fakehost.TegraLibDir
	host, err := os.ReadFile(filepath.Join(fh.Root, lib, "libcuda.so.1.1"))
	require.NoError(t, err)
	got, err := os.ReadFile(c.Path(lib + "/libcuda.so.1.1"))
	require.NoError(t, err, "libcuda.so.1.1 in the container")
	assert.Equal(t, host, got)
	link, err := os.Readlink(c.Path(lib + "/libcuda.so.1"))
	require.NoError(t, err)
	assert.Equal(t, "libcuda.so.1.1", link)
	_, err = os.Stat(c.Path("/usr/lib/aarch64-linux-gnu/tegra-egl/libEGL_nvidia.so.0"))
	assert.NoError(t, err, "the dir entry's contents")
	_, err = os.Stat(c.Path(tegra.ReleaseFile))
	assert.NoError(t, err)
	entries := strings.Join(testutil.LdconfigEntries(t, c.Path("/etc/ld.so.cache")), "\n")
	assert.Contains(t, entries, "libcuda.so.1 (libc6,x86-64) => "+lib+"/libcuda.so.1")
	rc, out := runProg(t, c)
	assert.Equal(t, 0, rc, "%s needs libcuda.so.1: %s", cudaProg, out)
	assert.Empty(t, container.DiffSnapshots(hostBefore, container.SnapshotTree(t, fh.Root)), "the Tegra host changed")
	assert.Empty(t, testutil.MountsBelow(t, fh.Root), "mounts left on the host under the Tegra host")
}

// TestApplyCSVHostileImage: an image whose /usr/lib/aarch64-linux-gnu is
// a link to a host directory. The link is resolved inside the rootfs
// only, where it leads nowhere: Apply refuses, undoes its work and
// writes nothing into the host directory.
func TestApplyCSVHostileImage(t *testing.T) {
	if !inPrivateNS(t) {
		return
	}
	_, h := csvHost(t, "")
	escape := t.TempDir()
	rootfs := newRootfs(t, debianLayout)
	testutil.BuildTree(t, rootfs, "symlink usr/lib/aarch64-linux-gnu "+escape+"\n")
	c := container.Start(t, &container.Options{Rootfs: rootfs})
	p, err := NewCSVPlan(h, csvRequest(t), ctrOf(c), nil)
	require.NoError(t, err)
	before := container.SnapshotTree(t, rootfs)
	err = p.Apply(context.Background(), ctrOf(c), nil)
	require.Error(t, err, "Apply through the image's link to %s", escape)
	var ae *ApplyError
	require.ErrorAs(t, err, &ae)
	require.NoError(t, ae.UndoErr)
	left, err := os.ReadDir(escape)
	require.NoError(t, err)
	assert.Empty(t, left, "Apply wrote into the host dir the image's link names")
	assert.Empty(t, container.DiffSnapshots(before, container.SnapshotTree(t, rootfs)), "the rootfs after a failed Apply")
	assert.Empty(t, testutil.MountsBelow(t, rootfs))
}

func findCSVMount(p *Plan, target string) (Mount, bool) {
	for _, m := range p.Mounts {
		if m.Target == target {
			return m, true
		}
	}
	return Mount{}, false
}

func mountTargetsOf(p *Plan, k MountKind) []string {
	var out []string
	for _, m := range p.Mounts {
		if m.Kind == k {
			out = append(out, m.Target)
		}
	}
	return out
}
