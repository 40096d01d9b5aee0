package nvcontainer_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/go-nvc/nvc/capabilities"
	"github.com/go-nvc/nvc/internal/fakehost"
	"github.com/go-nvc/nvc/internal/testutil"
	"github.com/go-nvc/nvc/nvcontainer"
	"github.com/go-nvc/nvc/nvcontainer/request"
)

// TestPlanLayout checks libnvidia-container's directory rules on
// rootfs trees, per architecture.
func TestPlanLayout(t *testing.T) {
	h := newTestHost(t, nil)
	for _, tc := range []struct {
		name, spec, goarch string
		want               nvcontainer.Layout
	}{
		{"debian", debianRootfs, "amd64", nvcontainer.Layout{Debian: true, LibDir: deb[:len(deb)-1], Lib32Dir: deb32[:len(deb32)-1], BinDir: "/usr/bin"}},
		{"debian-arm64", debianRootfs, "arm64", nvcontainer.Layout{Debian: true, LibDir: "/usr/lib/aarch64-linux-gnu", Lib32Dir: "/var/empty", BinDir: "/usr/bin"}},
		{"debian-ppc64le", debianRootfs, "ppc64le", nvcontainer.Layout{Debian: true, LibDir: "/usr/lib/powerpc64le-linux-gnu", Lib32Dir: "/var/empty", BinDir: "/usr/bin"}},
		{"fedora", fedoraRootfs, "amd64", nvcontainer.Layout{LibDir: "/usr/lib64", Lib32Dir: "/usr/lib", BinDir: "/usr/bin"}},
		{"fedora-riscv64", fedoraRootfs, "riscv64", nvcontainer.Layout{LibDir: "/usr/lib64", Lib32Dir: "/usr/lib", BinDir: "/usr/bin"}},
		{"lib32", "dir usr/lib32\ndir usr/lib\ndir usr/lib64", "amd64", nvcontainer.Layout{LibDir: "/usr/lib64", Lib32Dir: "/usr/lib32", BinDir: "/usr/bin"}},
		{"lib-is-lib64", "dir usr/lib64\nsymlink usr/lib lib64", "amd64", nvcontainer.Layout{LibDir: "/usr/lib64", Lib32Dir: "/usr/lib32", BinDir: "/usr/bin"}},
		{"lib64-is-lib", "dir usr/lib\nsymlink usr/lib64 /usr/lib", "amd64", nvcontainer.Layout{LibDir: "/usr/lib64", Lib32Dir: "/usr/lib32", BinDir: "/usr/bin"}},
		{"no-usr-lib", "dir usr/lib64", "amd64", nvcontainer.Layout{LibDir: "/usr/lib64", Lib32Dir: "/usr/lib32", BinDir: "/usr/bin"}},
		{"empty", "dir tmp", "amd64", nvcontainer.Layout{LibDir: "/usr/lib64", Lib32Dir: "/usr/lib32", BinDir: "/usr/bin"}},
		{"debian-link-in-root", "file etc/os/debian_version x\nsymlink etc/debian_version /etc/os/debian_version", "amd64",
			nvcontainer.Layout{Debian: true, LibDir: deb[:len(deb)-1], Lib32Dir: deb32[:len(deb32)-1], BinDir: "/usr/bin"}},
		{"debian-dangling", "dir usr/lib\nsymlink etc/debian_version nowhere", "amd64", nvcontainer.Layout{LibDir: "/usr/lib64", Lib32Dir: "/usr/lib", BinDir: "/usr/bin"}},
		{"debian-loop", "dir usr/lib\nsymlink etc/debian_version debian_version", "amd64", nvcontainer.Layout{LibDir: "/usr/lib64", Lib32Dir: "/usr/lib", BinDir: "/usr/bin"}},
	} {
		p := h.plan(t, capsRequest(capabilities.Of(capabilities.Utility)), tc.spec, &nvcontainer.PlanOptions{GOARCH: tc.goarch})
		if p.Layout != tc.want {
			t.Errorf("%s: layout %+v, want %+v", tc.name, p.Layout, tc.want)
		}
	}
	_, err := nvcontainer.NewPlan(h.host, capsRequest(capabilities.Of(capabilities.Utility)),
		nvcontainer.Container{Rootfs: testutil.Tree(t, debianRootfs)}, &nvcontainer.PlanOptions{GOARCH: "riscv64"})
	if !errors.Is(err, nvcontainer.ErrUnsupportedArch) || err.Error() != `container error: choosing library dirs for a Debian rootfs on GOARCH "riscv64": unsupported architecture` {
		t.Errorf("Debian on riscv64: %v", err)
	}
}

// TestPlanLibraryDirs checks that libraries of a Fedora host land in a
// Debian rootfs's multiarch dirs and the other way round, under their
// real names, and that the loader cache covers those dirs.
func TestPlanLibraryDirs(t *testing.T) {
	caps := capabilities.Of(capabilities.Compute, capabilities.Compat32)
	for _, tc := range []struct {
		host        fakehost.Layout
		spec        string
		libs, dirs  []string
		soname, tgt string
	}{
		{fakehost.Fedora, debianRootfs, []string{deb + "libcuda.so." + ver, deb32 + "libcuda.so." + ver},
			[]string{deb[:len(deb)-1], deb32[:len(deb32)-1]}, deb + "libcuda.so.1", "libcuda.so." + ver},
		{fakehost.Debian, fedoraRootfs, []string{"/usr/lib64/libcuda.so." + ver, "/usr/lib/libcuda.so." + ver},
			[]string{"/usr/lib64", "/usr/lib"}, "/usr/lib64/libcuda.so.1", "libcuda.so." + ver},
	} {
		h := newTestHost(t, &fakehost.Options{Layout: tc.host})
		p := h.plan(t, capsRequest(caps), tc.spec, nil)
		for _, l := range tc.libs {
			if _, ok := findMount(p, l); !ok {
				t.Errorf("%s host: no library at %s", tc.host, l)
			}
		}
		if !slices.Equal(p.LDCache.Dirs, tc.dirs) || len(p.LDCache.FirstDirs) != 0 {
			t.Errorf("%s host: loader cache %+v, want dirs %v", tc.host, p.LDCache, tc.dirs)
		}
		if got, _ := findLink(p, tc.soname); got != tc.tgt {
			t.Errorf("%s host: %s -> %q, want %q", tc.host, tc.soname, got, tc.tgt)
		}
		checkInvariants(t, h, p)
	}
}

// TestPlanHostPaths checks a plan without a rootfs: libraries keep their
// host paths, links go beside them.
func TestPlanHostPaths(t *testing.T) {
	h := newTestHost(t, &fakehost.Options{Layout: fakehost.Fedora})
	p := h.plan(t, capsRequest(capabilities.Of(capabilities.Compute, capabilities.Compat32)), "", nil)
	want := nvcontainer.Layout{HostPaths: true, LibDir: "/usr/lib64", Lib32Dir: "/usr/lib", BinDir: "/usr/bin"}
	if p.Layout != want {
		t.Errorf("layout %+v", p.Layout)
	}
	for _, target := range []string{"/usr/lib64/libcuda.so." + ver, "/usr/lib/libcuda.so." + ver, "/usr/bin/nvidia-cuda-mps-server"} {
		if _, ok := findMount(p, target); !ok {
			t.Errorf("no mount at %s", target)
		}
	}
	if got, _ := findLink(p, "/usr/lib64/libcuda.so.1"); got != "libcuda.so."+ver {
		t.Errorf("libcuda.so.1 -> %q", got)
	}
	if !slices.Equal(p.LDCache.Dirs, []string{"/usr/lib64", "/usr/lib"}) {
		t.Errorf("dirs %v", p.LDCache.Dirs)
	}
	if p.CUDACompat.Used || p.CUDACompat.Mode != request.CompatLdconfig {
		t.Errorf("compat %+v", p.CUDACompat)
	}
	checkInvariants(t, h, p)
}
