package ldcache_test

import (
	"bytes"
	"context"
	"os"
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
//     libraries, as nvidia-container-cli mounts them (that directory
//     changed: only the snapshot taken before and the list of added files
//     let its entries be reused).
//
// The root is on the disk (fs=disk: ext4 here, the libraries hard links
// to the host's) or on a tmpfs (fs=tmpfs, copies), as a container's
// rootfs may be; every writer syncs the file it writes. Each iteration
// runs, on the same root, in turn: the incremental update (TakeSnapshot,
// the Build with Reuse, Before and Added, and its write), the full Build
// and its write, and glibc's `ldconfig -r ROOT -X -C FILE DIR`. It
// reports each one's wall time (incr-ns/op, full-ns/op, ldconfig-ns/op)
// and CPU time (user + system, all threads: *-cpu-ns/op) per operation,
// and the ratios x-wall-vs-ldconfig and x-cpu-vs-ldconfig (glibc's time
// over the incremental one's) and x-cpu-vs-full. Before timing it checks
// that the incremental cache is the full one.
func BenchmarkIncrementalUpdate(b *testing.B) {
	for _, fs := range []struct {
		name string
		root func(testing.TB) string
	}{{"disk", hostMirror}, {"tmpfs", tmpfsMirror}} {
		for _, c := range []struct{ name, dir string }{
			{"driver-dir", "/usr/lib/x86_64-linux-gnu/nvidia"},
			{"in-libdir", "/usr/lib/x86_64-linux-gnu"},
		} {
			b.Run("fs="+fs.name+"/"+c.name, func(b *testing.B) { benchIncremental(b, fs.root(b), c.dir) })
		}
	}
}

func benchIncremental(b *testing.B, root, dir string) {
	ldconfig := testutil.GlibcLdconfig(b)
	testutil.RequireRoot(b)
	testutil.BuildTree(b, root, "file etc/ld.so.conf.d/zz-nvidia.conf \"/usr/lib/x86_64-linux-gnu/nvidia\\n\"\ndir usr/lib/x86_64-linux-gnu/nvidia\n")
	time.Sleep(12 * time.Millisecond)
	runLdconfig(b, "-r", root, "-X") // the image's own cache
	dirs := []string{dir}
	before, err := ldcache.TakeSnapshot(root, "", dirs)
	require.NoError(b, err, "TakeSnapshot")
	added := injectDriver(b, root, dir)
	incr := func() {
		_, err := ldcache.TakeSnapshot(root, "", dirs) // its cost; the one taken before the injection is used
		require.NoError(b, err)
		writeBench(b, root, "/etc/ld.so.cache.incr", &ldcache.BuildOptions{Dirs: dirs, Reuse: "/etc/ld.so.cache", NoLinks: true, Before: before, Added: added})
	}
	full := func() { writeBench(b, root, "/etc/ld.so.cache.full", &ldcache.BuildOptions{Dirs: dirs, NoLinks: true}) }
	peer := newPeer(b, ldconfig, []string{"-r", root, "-X", "-C", "/etc/ld.so.cache.glibc", dir})
	incr()
	full()
	peer.run(b)
	sameFiles(b, root, "/etc/ld.so.cache.incr", "/etc/ld.so.cache.full")
	floor := newSyscallFloor(b, root, "/etc/ld.so.cache.full", added)
	var mi, mf, mg, mfl benchMeter
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		mi.ours(b, incr)
		mf.ours(b, full)
		mg.peer(b, peer)
		mfl.ours(b, func() { floor.run(b) })
	}
	n := float64(b.N)
	per := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / n }
	b.ReportMetric(per(mi.nvcCPU), "incr-cpu-ns/op")
	b.ReportMetric(per(mf.nvcCPU), "full-cpu-ns/op")
	b.ReportMetric(per(mg.glibcCPU), "ldconfig-cpu-ns/op")
	b.ReportMetric(per(mi.nvc), "incr-ns/op")
	b.ReportMetric(per(mf.nvc), "full-ns/op")
	b.ReportMetric(per(mg.glibc), "ldconfig-ns/op")
	b.ReportMetric(per(mfl.nvcCPU), "floor-cpu-ns/op")
	if mi.nvcCPU > 0 && mi.nvc > 0 {
		b.ReportMetric(float64(mg.glibcCPU)/float64(mi.nvcCPU), "x-cpu-vs-ldconfig")
		b.ReportMetric(float64(mf.nvcCPU)/float64(mi.nvcCPU), "x-cpu-vs-full")
		b.ReportMetric(float64(mg.glibc)/float64(mi.nvc), "x-wall-vs-ldconfig")
		b.ReportMetric(float64(mg.glibcCPU)/float64(mfl.nvcCPU), "x-cpu-floor-vs-ldconfig")
	}
}

// injectDriver writes the driver's libraries into dir, each with its
// SONAME link, and returns the paths added.
func injectDriver(b *testing.B, root, dir string) []string {
	var libs []lib
	var added []string
	for _, soname := range driverLibs {
		obj := x64(soname, "libc.so.6")
		obj.Pad = 16 << 10
		file := soname + ".550.54.15"
		libs = append(libs, lib{filepath.Join(dir, file), obj})
		added = append(added, filepath.Join(dir, file))
		if file != soname {
			require.NoError(b, os.Symlink(file, filepath.Join(root, dir, soname)))
			added = append(added, filepath.Join(dir, soname))
		}
	}
	writeLibs(b, root, libs)
	return added
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
