package nvcontainer_test

import (
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"

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
			if p.Layout != tc.layout {
				t.Errorf("layout %+v, want %+v", p.Layout, tc.layout)
			}
			if p.CUDACompat.Used || len(p.CUDACompat.Libraries) != 0 || len(p.LDCache.FirstDirs) != 0 {
				t.Errorf("compat took host files: %+v", p.CUDACompat)
			}
			for _, m := range p.Mounts {
				if m.Kind == nvcontainer.MountCompat {
					t.Errorf("image file mounted: %+v", m)
				}
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
	if !p.CUDACompat.Used || p.CUDACompat.Dir != "/srv/cuda/compat" || len(p.LDCache.FirstDirs) != 1 || p.LDCache.FirstDirs[0] != "/srv/cuda/compat" {
		t.Errorf("compat %+v, first dirs %v", p.CUDACompat, p.LDCache.FirstDirs)
	}
}

// TestPlanRootfsSymlink refuses a rootfs that is itself a symlink, and a
// missing one, with a container error, and "/" or a relative path with an
// input error, as nvidia-container-cli does.
func TestPlanRootfsSymlink(t *testing.T) {
	h := newTestHost(t, nil)
	dir := testutil.Tree(t, debianRootfs)
	link := filepath.Join(t.TempDir(), "rootfs")
	if err := os.Symlink(dir, link); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		rootfs string
		stage  nvcontainer.Stage
	}{
		{link, nvcontainer.StageContainer},
		{filepath.Join(dir, "missing"), nvcontainer.StageContainer},
		{"/", nvcontainer.StageInput},
		{"//.", nvcontainer.StageInput},
		{"rootfs", nvcontainer.StageInput},
	} {
		_, err := nvcontainer.NewPlan(h.host, capsRequest(capabilities.Of(capabilities.Utility)), nvcontainer.Container{Rootfs: tc.rootfs}, nil)
		var pe *nvcontainer.PlanError
		if !errors.As(err, &pe) || pe.Stage != tc.stage {
			t.Errorf("%s: %v", tc.rootfs, err)
		}
	}
}

// TestPlanHostileSoname: driver libraries whose ELF SONAME is not a plain
// file name ("../../../etc/ld.so.preload", "..", ".") get no SONAME link
// (it would land elsewhere in the rootfs, or replace a directory) and the
// plan says why; their other links and the well-formed libraries' links
// stay.
func TestPlanHostileSoname(t *testing.T) {
	fh, err := fakehost.Generate(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	bad := map[string]string{
		"libcuda.so." + ver:             "../../../etc/ld.so.preload",
		"libnvidia-allocator.so." + ver: "..",
		"libnvidia-ml.so." + ver:        ".",
	}
	for lib, soname := range bad {
		p := filepath.Join(fh.Root, deb, lib)
		if err := os.Remove(p); err != nil {
			t.Fatal(err)
		}
		if err := elfwriter.WriteFile(p, elfwriter.Library(soname), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	h := openTestHost(t, fh, devices.NVML)
	p := h.plan(t, capsRequest(capabilities.Of(capabilities.Compute, capabilities.Utility, capabilities.Graphics)), debianRootfs, nil)
	for _, l := range p.Symlinks {
		inDir := path.Dir(l.Path) == path.Clean(deb) || l.Path == deb+"gbm/nvidia-drm_gbm.so"
		name := path.Base(l.Path)
		plainTarget := !strings.Contains(l.Target, "/") || l.Target == "../libnvidia-allocator.so.1"
		if !inDir || name == "." || name == ".." || !plainTarget || l.Target == "." || l.Target == ".." {
			t.Errorf("link %s -> %s", l.Path, l.Target)
		}
	}
	if target, ok := findLink(p, deb+"libcuda.so"); !ok || target != "libcuda.so.1" {
		t.Errorf("libcuda.so -> %q (%v)", target, ok)
	}
	if target, ok := findLink(p, deb+"libnvidia-ptxjitcompiler.so.1"); !ok || target != "libnvidia-ptxjitcompiler.so."+ver {
		t.Errorf("a well-formed SONAME lost its link: %q (%v)", target, ok)
	}
	for lib, soname := range bad {
		want := fmt.Sprintf("ignoring SONAME %q of %s: not a file name", soname, filepath.Join(fh.Root, deb, lib))
		if !slices.Contains(p.Warnings, want) {
			t.Errorf("no warning %q in %q", want, p.Warnings)
		}
	}
}
