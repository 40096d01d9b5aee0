package nvcontainer_test

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-nvc/nvc/capabilities"
	"github.com/go-nvc/nvc/devices"
	"github.com/go-nvc/nvc/internal/elfwriter"
	"github.com/go-nvc/nvc/internal/fakehost"
	"github.com/go-nvc/nvc/internal/testutil"
	"github.com/go-nvc/nvc/nvcontainer"
	"github.com/go-nvc/nvc/nvcontainer/request"
)

// hostBait is a host directory (outside every rootfs) holding what a
// hostile image would like the planner to find: a debian_version, a
// lib32 dir, and CUDA compat libraries newer than the driver. A planner
// that followed a symlink out of the rootfs would see them and change its
// decisions.
func hostBait(t *testing.T) string {
	t.Helper()
	return testutil.Tree(t, `
file etc/debian_version "bait\n"
dir  usr/lib32
file usr/local/cuda/compat/libcuda.so.999.1.1 "ELF"
file compat/libcuda.so.999.1.1 "ELF"
file libcuda.so.999.1.1 "ELF"
`)
}

// TestPlanHostileRootfs checks that inspecting a hostile rootfs never
// reads outside it: every symlink that points at the bait (absolute,
// relative with deep ".." chains, through a symlinked parent) is
// resolved inside the rootfs instead, so the plan is the one for an image
// without those files.
func TestPlanHostileRootfs(t *testing.T) {
	h := newTestHost(t, nil)
	bait := hostBait(t)
	up := "../../../../../../../../../../../../../../.." + bait
	fedora := nvcontainer.Layout{LibDir: "/usr/lib64", Lib32Dir: "/usr/lib", BinDir: "/usr/bin"}
	for _, tc := range []struct {
		name, spec string
		layout     nvcontainer.Layout
	}{
		{"debian_version absolute", "dir usr/lib\nsymlink etc/debian_version " + bait + "/etc/debian_version", fedora},
		{"debian_version dotdot", "dir usr/lib\nsymlink etc/debian_version " + up + "/etc/debian_version", fedora},
		{"etc symlinked", "dir usr/lib\nsymlink etc " + bait + "/etc", fedora},
		{"etc dotdot", "dir usr/lib\nsymlink etc " + up + "/etc", fedora},
		{"lib32 absolute", "dir usr/lib\nsymlink usr/lib32 " + bait + "/usr/lib32", fedora},
		{"usr symlinked", "symlink usr " + bait + "/usr", nvcontainer.Layout{LibDir: "/usr/lib64", Lib32Dir: "/usr/lib32", BinDir: "/usr/bin"}},
		{"cuda to host", "dir usr/lib\nsymlink usr/local/cuda " + bait + "/usr/local/cuda", fedora},
		{"cuda to /", "dir usr/lib\nsymlink usr/local/cuda /", fedora},
		{"cuda dotdot", "dir usr/lib\nsymlink usr/local/cuda " + up + "/usr/local/cuda", fedora},
		{"compat to host", "dir usr/lib\nsymlink usr/local/cuda/compat " + bait + "/compat", fedora},
		{"compat lib to host", "dir usr/lib\ndir usr/local/cuda/compat\nsymlink usr/local/cuda/compat/libcuda.so.999.1.1 " + bait + "/libcuda.so.999.1.1", fedora},
		{"compat lib dotdot", "dir usr/lib\ndir usr/local/cuda/compat\nsymlink usr/local/cuda/compat/libcuda.so.999.1.1 " + up + "/libcuda.so.999.1.1", fedora},
		{"cuda loop", "dir usr/lib\nsymlink usr/local/cuda cuda", fedora},
		{"debian_version fifo", "dir usr/lib\nfifo etc/debian_version", nvcontainer.Layout{Debian: true, LibDir: deb[:len(deb)-1], Lib32Dir: deb32[:len(deb32)-1], BinDir: "/usr/bin"}},
		{"compat lib fifo", "dir usr/lib\nfifo usr/local/cuda/compat/libcuda.so.999.1.1", fedora},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := h.plan(t, compatRequest(request.CompatMount), tc.spec, nil)
			assert.Equal(t, tc.layout, p.Layout, "layout")
			assert.False(t, p.CUDACompat.Used, "compat took host files: %+v", p.CUDACompat)
			assert.Empty(t, p.CUDACompat.Libraries, "compat took host files: %+v", p.CUDACompat)
			assert.Empty(t, p.LDCache.FirstDirs, "compat took host files: %+v", p.CUDACompat)
			for _, m := range p.Mounts {
				assert.NotEqual(t, nvcontainer.MountCompat, m.Kind, "image file mounted: %+v", m)
			}
		})
	}
}

// TestPlanHostileCompatInRoot checks that the same symlinks work when
// their targets are inside the rootfs: resolution is in-root, not refused.
func TestPlanHostileCompatInRoot(t *testing.T) {
	h := newTestHost(t, nil)
	spec := debianRootfs + `
file    srv/cuda/compat/libcuda.so.570.86.10 "ELF"
symlink usr/local/cuda ../../../../../../srv/cuda
`
	p := h.plan(t, compatRequest(request.CompatLdconfig), spec, nil)
	assert.True(t, p.CUDACompat.Used, "compat %+v", p.CUDACompat)
	assert.Equal(t, "/srv/cuda/compat", p.CUDACompat.Dir, "compat %+v", p.CUDACompat)
	assert.Equal(t, []string{"/srv/cuda/compat"}, p.LDCache.FirstDirs, "first dirs")
}

// TestPlanRootfsSymlink refuses a rootfs that is itself a symlink, and a
// missing one, with a container error, and "/" or a relative path with an
// input error, as nvidia-container-cli does.
func TestPlanRootfsSymlink(t *testing.T) {
	h := newTestHost(t, nil)
	dir := testutil.Tree(t, debianRootfs)
	link := filepath.Join(t.TempDir(), "rootfs")
	require.NoError(t, os.Symlink(dir, link))
	for _, tc := range []struct {
		name, rootfs string
		stage        nvcontainer.Stage
	}{
		{"symlink", link, nvcontainer.StageContainer},
		{"missing", filepath.Join(dir, "missing"), nvcontainer.StageContainer},
		{"root", "/", nvcontainer.StageInput},
		{"root dotted", "//.", nvcontainer.StageInput},
		{"relative", "rootfs", nvcontainer.StageInput},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := nvcontainer.NewPlan(h.host, capsRequest(capabilities.Of(capabilities.Utility)), nvcontainer.Container{Rootfs: tc.rootfs}, nil)
			var pe *nvcontainer.PlanError
			require.ErrorAs(t, err, &pe, "%s", tc.rootfs)
			assert.Equal(t, tc.stage, pe.Stage, "%s: %v", tc.rootfs, err)
		})
	}
}

// TestPlanHostileSoname: driver libraries whose ELF SONAME is not a plain
// file name ("../../../etc/ld.so.preload", "..", ".") get no SONAME link
// (it would land elsewhere in the rootfs, or replace a directory) and the
// plan says why; their other links and the well-formed libraries' links
// stay.
func TestPlanHostileSoname(t *testing.T) {
	fh, err := fakehost.Generate(t.TempDir(), nil)
	require.NoError(t, err)
	bad := map[string]string{
		"libcuda.so." + ver:             "../../../etc/ld.so.preload",
		"libnvidia-allocator.so." + ver: "..",
		"libnvidia-ml.so." + ver:        ".",
	}
	for lib, soname := range bad {
		p := filepath.Join(fh.Root, deb, lib)
		require.NoError(t, os.Remove(p))
		require.NoError(t, elfwriter.WriteFile(p, elfwriter.Library(soname), 0o755))
	}
	h := openTestHost(t, fh, devices.NVML)
	p := h.plan(t, capsRequest(capabilities.Of(capabilities.Compute, capabilities.Utility, capabilities.Graphics)), debianRootfs, nil)
	for _, l := range p.Symlinks {
		if l.For != "" { // a GPU's /dev/dri/by-path link (TestPlanDRM)
			continue
		}
		inDir := path.Dir(l.Path) == path.Clean(deb) || l.Path == deb+"gbm/nvidia-drm_gbm.so"
		name := path.Base(l.Path)
		plainTarget := !strings.Contains(l.Target, "/") || l.Target == "../libnvidia-allocator.so.1"
		assert.True(t, inDir, "link %s -> %s: not in the library dir", l.Path, l.Target)
		assert.NotContains(t, []string{".", ".."}, name, "link %s -> %s", l.Path, l.Target)
		assert.True(t, plainTarget, "link %s -> %s: target not a file name", l.Path, l.Target)
		assert.NotContains(t, []string{".", ".."}, l.Target, "link %s -> %s", l.Path, l.Target)
	}
	target, ok := findLink(p, deb+"libcuda.so")
	assert.True(t, ok, "libcuda.so: no link")
	assert.Equal(t, "libcuda.so.1", target, "libcuda.so ->")
	target, ok = findLink(p, deb+"libnvidia-ptxjitcompiler.so.1")
	assert.True(t, ok, "a well-formed SONAME lost its link")
	assert.Equal(t, "libnvidia-ptxjitcompiler.so."+ver, target, "a well-formed SONAME lost its link")
	for lib, soname := range bad {
		want := fmt.Sprintf("ignoring SONAME %q of %s: not a file name", soname, filepath.Join(fh.Root, deb, lib))
		assert.Contains(t, p.Warnings, want, "no warning %q", want)
	}
}
