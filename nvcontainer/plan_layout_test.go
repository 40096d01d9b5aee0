package nvcontainer_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

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
		t.Run(tc.name, func(t *testing.T) {
			p := h.plan(t, capsRequest(capabilities.Of(capabilities.Utility)), tc.spec, &nvcontainer.PlanOptions{GOARCH: tc.goarch})
			assert.Equal(t, tc.want, p.Layout, "%s: layout", tc.name)
		})
	}
	_, err := nvcontainer.NewPlan(h.host, capsRequest(capabilities.Of(capabilities.Utility)),
		nvcontainer.Container{Rootfs: testutil.Tree(t, debianRootfs)}, &nvcontainer.PlanOptions{GOARCH: "riscv64"})
	assert.ErrorIs(t, err, nvcontainer.ErrUnsupportedArch, "Debian on riscv64")
	assert.EqualError(t, err, `container error: choosing library dirs for a Debian rootfs on GOARCH "riscv64": unsupported architecture`, "Debian on riscv64")
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
		t.Run(string(tc.host)+" host", func(t *testing.T) {
			h := newTestHost(t, &fakehost.Options{Layout: tc.host})
			p := h.plan(t, capsRequest(caps), tc.spec, nil)
			for _, l := range tc.libs {
				_, ok := findMount(p, l)
				assert.True(t, ok, "%s host: no library at %s", tc.host, l)
			}
			assert.Equal(t, tc.dirs, p.LDCache.Dirs, "%s host: loader cache %+v", tc.host, p.LDCache)
			assert.Empty(t, p.LDCache.FirstDirs, "%s host: loader cache %+v", tc.host, p.LDCache)
			got, _ := findLink(p, tc.soname)
			assert.Equal(t, tc.tgt, got, "%s host: %s ->", tc.host, tc.soname)
			checkInvariants(t, h, p)
		})
	}
}

// TestPlanHostPaths checks a plan without a rootfs: libraries keep their
// host paths, links go beside them.
func TestPlanHostPaths(t *testing.T) {
	h := newTestHost(t, &fakehost.Options{Layout: fakehost.Fedora})
	p := h.plan(t, capsRequest(capabilities.Of(capabilities.Compute, capabilities.Compat32)), "", nil)
	want := nvcontainer.Layout{HostPaths: true, LibDir: "/usr/lib64", Lib32Dir: "/usr/lib", BinDir: "/usr/bin"}
	assert.Equal(t, want, p.Layout, "layout")
	for _, target := range []string{"/usr/lib64/libcuda.so." + ver, "/usr/lib/libcuda.so." + ver, "/usr/bin/nvidia-cuda-mps-server"} {
		_, ok := findMount(p, target)
		assert.True(t, ok, "no mount at %s", target)
	}
	got, _ := findLink(p, "/usr/lib64/libcuda.so.1")
	assert.Equal(t, "libcuda.so."+ver, got, "libcuda.so.1 ->")
	assert.Equal(t, []string{"/usr/lib64", "/usr/lib"}, p.LDCache.Dirs, "dirs")
	assert.False(t, p.CUDACompat.Used, "compat %+v", p.CUDACompat)
	assert.Equal(t, request.CompatLdconfig, p.CUDACompat.Mode, "compat %+v", p.CUDACompat)
	checkInvariants(t, h, p)
}
