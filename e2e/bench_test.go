//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/go-nvc/nvc/internal/fakehost"
	"github.com/go-nvc/nvc/internal/testutil"
	"github.com/go-nvc/nvc/internal/testutil/container"
	"github.com/go-nvc/nvc/ldcache"
)

// Whole-process benchmarks. The loader cache step is compared with the
// way NVIDIA's toolchain does it — glibc's ldconfig executed on the
// container root, since Container Toolkit 1.17.7 inside new namespaces —
// and a whole `nvidia-container-cli configure` of ours is timed on live
// containers. Each "nvc" sub-benchmark reports the alternatives' time per
// operation divided by its own, as measured in the same run
// (x-slower metrics).

// libDir is where a Debian container's driver libraries are mounted, the
// directory the cache update adds.
const libDir = "/usr/lib/x86_64-linux-gnu"

// nsPerOp records sub-benchmark results of the current run by name.
var nsPerOp = map[string]float64{}

func record(b *testing.B, name string) {
	if b.N > 0 {
		nsPerOp[name] = float64(b.Elapsed().Nanoseconds()) / float64(b.N)
	}
}

// reportRatios reports how many times slower each alternative was.
func reportRatios(b *testing.B, ours string, alternatives ...string) {
	for _, alt := range alternatives {
		if nsPerOp[ours] > 0 && nsPerOp[alt] > 0 {
			b.ReportMetric(nsPerOp[alt]/nsPerOp[ours], alt+"-x-slower")
		}
	}
}

// BenchmarkLDCacheUpdate rebuilds a container root's ld.so.cache with the
// driver's library dir added, on two roots: "driver" holds the simulated
// driver's libraries (native and 32-bit) beside libc, "distro" also the
// host's ~440 system libraries (links to them), as a full CUDA image would.
//
//	toolkit-chain: unshare --mount --uts --ipc --net --pid --fork ldconfig -r ROOT -C /etc/ld.so.cache -f /etc/ld.so.conf DIR
//	               (update-ldcache since toolkit 1.17.7: new namespaces, then the host's ldconfig, with its links)
//	ldconfig:      ldconfig -r ROOT -C /etc/ld.so.cache -f /etc/ld.so.conf DIR   (toolkit ≤ 1.16)
//	nvc-ldconfig:  our examples/ldconfig with the same arguments (Go, one process)
//	nvc:           ldcache.Update(context.Background(), ROOT, {Dirs: [DIR]}) in-process, what our configure does
func BenchmarkLDCacheUpdate(b *testing.B) {
	testutil.RequireRoot(b) // ldconfig -r chroots
	glibc := testutil.GlibcLdconfig(b)
	unshare := testutil.RequireCommand(b, "unshare")
	ours := buildExample(b, "ldconfig", false)
	fh := simHost(b, nil)
	for _, size := range []string{"driver", "distro"} {
		root := benchRoot(b, fh, size == "distro")
		args := []string{"-r", root, "-C", "/etc/ld.so.cache", "-f", "/etc/ld.so.conf", libDir}
		b.Run(size+"/toolkit-chain", func(b *testing.B) {
			execLoop(b, unshare, append([]string{"--mount", "--uts", "--ipc", "--net", "--pid", "--fork", glibc}, args...)...)
			record(b, size+"/toolkit-chain")
		})
		b.Run(size+"/ldconfig", func(b *testing.B) {
			execLoop(b, glibc, args...)
			record(b, size+"/ldconfig")
		})
		b.Run(size+"/nvc-ldconfig", func(b *testing.B) {
			execLoop(b, ours, args...)
			record(b, size+"/nvc-ldconfig")
		})
		b.Run(size+"/nvc", func(b *testing.B) {
			for b.Loop() {
				require.NoError(b, ldcache.Update(context.Background(), root, &ldcache.UpdateOptions{Dirs: []string{libDir}}))
			}
			record(b, size+"/nvc")
			reportRatios(b, size+"/nvc", size+"/toolkit-chain", size+"/ldconfig", size+"/nvc-ldconfig")
		})
	}
	checkCacheListsLibcuda(b, benchRootDir, libDir)
}

// benchRootDir is the last root benchRoot made (for a final check).
var benchRootDir string

// benchRoot is a container root as configure leaves it: the driver's
// libraries in libDir and the i386 dir, libc and the loader; with distro,
// links to the host's system libraries too.
func benchRoot(b *testing.B, fh *fakehost.Host, distro bool) string {
	b.Helper()
	root := b.TempDir()
	testutil.BuildTree(b, root, "file etc/debian_version \"12.5\\n\"\nfile etc/ld.so.conf \"include /etc/ld.so.conf.d/*.conf\\n\"\ndir etc/ld.so.conf.d\ndir "+libDir[1:])
	testutil.AddHostLibc(b, root)
	for _, dir := range []string{fh.LibDir, fh.Lib32Dir} {
		entries, err := os.ReadDir(filepath.Join(fh.Root, dir))
		require.NoError(b, err)
		for _, e := range entries {
			if e.Type().IsRegular() {
				testutil.CopyHostFile(b, filepath.Join(fh.Root, dir, e.Name()), filepath.Join(root, dir, e.Name()), 0o755)
			}
		}
	}
	if distro {
		linkSystemLibraries(b, root)
	}
	benchRootDir = root
	return root
}

// linkSystemLibraries hard-links the host's regular .so files (and
// recreates its symlinks) into root's libDir, where they are not there yet.
func linkSystemLibraries(b *testing.B, root string) {
	b.Helper()
	entries, err := os.ReadDir(libDir)
	require.NoError(b, err)
	for _, e := range entries {
		src, dst := filepath.Join(libDir, e.Name()), filepath.Join(root, libDir, e.Name())
		if !strings.Contains(e.Name(), ".so") {
			continue
		}
		if _, err := os.Lstat(dst); err == nil {
			continue
		}
		switch {
		case e.Type()&os.ModeSymlink != 0:
			if target, err := os.Readlink(src); err == nil {
				os.Symlink(target, dst)
			}
		case e.Type().IsRegular():
			if err := os.Link(src, dst); err != nil {
				testutil.CopyHostFile(b, src, dst, 0o755)
			}
		}
	}
}

func execLoop(b *testing.B, prog string, args ...string) {
	b.Helper()
	for b.Loop() {
		out, err := exec.Command(prog, args...).CombinedOutput()
		require.NoError(b, err, "%s %s: %s", prog, strings.Join(args, " "), out)
	}
}

// BenchmarkConfigure times one whole `nvidia-container-cli configure` of
// ours — process start, driver and device discovery on the simulated
// host, planning, namespace entry, ~100 mounts and symlinks, the loader
// cache — on a live container (mount and PID namespaces, rootfs at its
// host path as during a prestart hook), a fresh one per iteration (made
// with the timer stopped). --no-cgroups: the test container has no device
// cgroup of its own. dry-run is the same command with --dry-run: process,
// discovery and planning only. peak-rss-KB is the CLI's maximum resident
// set size in one more run (see peakRSSKB).
//
//	nvidia-container-cli --root=H --proc-root=H/proc --dev-root=H/dev configure --pid=PID --device=0 --compute --utility --no-cgroups ROOTFS
func BenchmarkConfigure(b *testing.B) {
	cli := benchCLI(b)
	fh := simHost(b, nil)
	for _, dry := range []bool{true, false} {
		name := map[bool]string{true: "nvc-cli-dry-run", false: "nvc-cli"}[dry]
		// args starts a fresh container and returns the command line for it.
		args := func(b *testing.B) []string {
			c := container.Start(b, &container.Options{Spec: "file etc/debian_version \"12.5\\n\"\ndir " + libDir[1:] + "\ndir usr/bin\ndir proc/driver/nvidia\n"})
			args := append(hostFlags(fh), "configure", fmt.Sprintf("--pid=%d", c.PID), "--device=0", "--compute", "--utility", "--no-cgroups", c.Rootfs)
			if dry {
				args = append(args, "--dry-run")
			}
			return args
		}
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				b.StopTimer()
				cmd := exec.Command(cli, args(b)...)
				b.StartTimer()
				out, err := cmd.CombinedOutput()
				require.NoError(b, err, "configure: %s", out)
			}
			b.StopTimer()
			if rss := peakRSSKB(b, cli, args(b)...); rss > 0 {
				b.ReportMetric(float64(rss), "peak-rss-KB")
			}
		})
	}
}
