package ldcache_test

import (
	"bytes"
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/go-nvc/nvc/internal/testutil"
	"github.com/go-nvc/nvc/ldcache"
)

// driverLibs are the driver's libraries a configure mounts (names and
// SONAMEs of a 550 driver; the files are generated).
var driverLibs = []string{"libcuda.so.1", "libnvidia-ml.so.1", "libnvidia-ptxjitcompiler.so.1",
	"libnvidia-nvvm.so.4", "libnvidia-opencl.so.1", "libnvidia-cfg.so.1", "libnvidia-gpucomp.so.550.54.15",
	"libnvidia-allocator.so.1", "libnvidia-pkcs11.so.550.54.15", "libnvidia-encode.so.1",
	"libnvcuvid.so.1", "libnvidia-opticalflow.so.1", "libnvidia-fbc.so.1", "libGLX_nvidia.so.0",
	"libEGL_nvidia.so.0", "libGLESv2_nvidia.so.2", "libGLESv1_CM_nvidia.so.1", "libnvidia-eglcore.so.550.54.15",
	"libnvidia-glcore.so.550.54.15", "libnvidia-tls.so.550.54.15", "libnvidia-glsi.so.550.54.15",
	"libnvidia-rtcore.so.550.54.15", "libnvoptix.so.1", "libnvidia-glvkspirv.so.550.54.15"}

// BenchmarkIncrementalUpdate is configure's loader-cache update of a
// Debian 12 root holding this host's ~600 real libraries (the host
// mirror) whose own cache glibc's ldconfig wrote, after the driver's 24
// libraries were put in:
//
//   - driver-dir: into a directory of their own, /usr/lib/x86_64-linux-gnu/nvidia
//     (also listed in the root's ld.so.conf.d);
//   - in-libdir: into /usr/lib/x86_64-linux-gnu beside the distribution's
//     libraries, as nvidia-container-cli mounts them: that directory
//     changed and is scanned in full.
//
// Each iteration runs, on the same root, in turn: the incremental Build
// (Reuse: the image's cache) and its write, the full Build and its write,
// and glibc's `ldconfig -r ROOT -X -C FILE DIR`. It reports each one's
// CPU time (user + system, all threads) and wall time per operation and
// the ratios of CPU time (x-cpu-vs-ldconfig: glibc's over the incremental
// one; x-cpu-vs-full) and of wall time (x-wall-vs-ldconfig). Before
// timing it checks that the incremental cache is the full one.
func BenchmarkIncrementalUpdate(b *testing.B) {
	for _, c := range []struct{ name, dir string }{
		{"driver-dir", "/usr/lib/x86_64-linux-gnu/nvidia"},
		{"in-libdir", "/usr/lib/x86_64-linux-gnu"},
	} {
		b.Run(c.name, func(b *testing.B) { benchIncremental(b, c.dir) })
	}
}

func benchIncremental(b *testing.B, dir string) {
	ldconfig := testutil.GlibcLdconfig(b)
	testutil.RequireRoot(b)
	root := hostMirror(b)
	testutil.BuildTree(b, root, "file etc/ld.so.conf.d/zz-nvidia.conf \"/usr/lib/x86_64-linux-gnu/nvidia\\n\"\ndir usr/lib/x86_64-linux-gnu/nvidia\n")
	runLdconfig(b, "-r", root, "-X") // the image's own cache
	time.Sleep(12 * time.Millisecond)
	var libs []lib
	for _, soname := range driverLibs {
		obj := x64(soname, "libc.so.6")
		obj.Pad = 16 << 10
		libs = append(libs, lib{filepath.Join(dir, soname+".550.54.15"), obj})
	}
	writeLibs(b, root, libs)
	dirs := []string{dir}
	incr := func() {
		writeBench(b, root, "/etc/ld.so.cache.incr", &ldcache.BuildOptions{Dirs: dirs, Reuse: "/etc/ld.so.cache", NoLinks: true})
	}
	full := func() { writeBench(b, root, "/etc/ld.so.cache.full", &ldcache.BuildOptions{Dirs: dirs, NoLinks: true}) }
	peer := newPeer(b, ldconfig, []string{"-r", root, "-X", "-C", "/etc/ld.so.cache.glibc", dir})
	incr()
	full()
	peer.run(b)
	sameFiles(b, root, "/etc/ld.so.cache.incr", "/etc/ld.so.cache.full")
	var mi, mf, mg benchMeter
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		mi.ours(b, incr)
		mf.ours(b, full)
		mg.peer(b, peer)
	}
	n := float64(b.N)
	per := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / n }
	b.ReportMetric(per(mi.nvcCPU), "incr-cpu-ns/op")
	b.ReportMetric(per(mf.nvcCPU), "full-cpu-ns/op")
	b.ReportMetric(per(mg.glibcCPU), "ldconfig-cpu-ns/op")
	b.ReportMetric(per(mi.nvc), "incr-ns/op")
	b.ReportMetric(per(mf.nvc), "full-ns/op")
	b.ReportMetric(per(mg.glibc), "ldconfig-ns/op")
	if mi.nvcCPU > 0 && mi.nvc > 0 {
		b.ReportMetric(float64(mg.glibcCPU)/float64(mi.nvcCPU), "x-cpu-vs-ldconfig")
		b.ReportMetric(float64(mf.nvcCPU)/float64(mi.nvcCPU), "x-cpu-vs-full")
		b.ReportMetric(float64(mg.glibc)/float64(mi.nvc), "x-wall-vs-ldconfig")
	}
}

func writeBench(b *testing.B, root, file string, o *ldcache.BuildOptions) {
	c, err := ldcache.Build(context.Background(), root, o)
	require.NoError(b, err, "Build")
	require.NoError(b, ldcache.WriteFileInRoot(root, file, c), "WriteFileInRoot %s", file)
}

func sameFiles(b *testing.B, root, x, y string) {
	cx, err := ldcache.OpenInRoot(root, x)
	require.NoError(b, err, "OpenInRoot %s", x)
	cy, err := ldcache.OpenInRoot(root, y)
	require.NoError(b, err, "OpenInRoot %s", y)
	bx, _ := cx.MarshalBinary()
	by, _ := cy.MarshalBinary()
	require.True(b, bytes.Equal(bx, by), "%s and %s differ (%d and %d entries)", x, y, len(cx.Entries), len(cy.Entries))
	b.Logf("%d entries", len(cx.Entries))
}
