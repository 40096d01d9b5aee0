//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
	cdispecs "tags.cncf.io/container-device-interface/specs-go"

	"github.com/go-nvc/nvc/internal/testutil"
)

// EnvBaselineHook names a second nvidia-cdi-hook binary (a build of an
// earlier commit) that BenchmarkHookUpdateLDCache times beside ours.
const EnvBaselineHook = "NVC_BENCH_BASELINE_HOOK"

// BenchmarkHookUpdateLDCache times the update-ldcache step of
// BenchmarkContainerStart alone, on its fixtures: a fresh overlay of its
// image (about 500 libraries in /usr/lib/x86_64-linux-gnu, the image's
// ld.so.cache) with the libraries of our generated spec bind-mounted
// into that directory, as runc mounts them, then one process on it: our
// static hook's `update-ldcache --folder /usr/lib/x86_64-linux-gnu`
// (nvc), glibc's `ldconfig -r ROOT -C /etc/ld.so.cache -f /etc/ld.so.conf
// DIR` (glibc, without the toolkit chain's unshare), and, when
// $NVC_BENCH_BASELINE_HOOK names one, another build of the hook
// (baseline). Each iteration runs each once, in that order, on a root of
// its own. Reported: the median CPU time (rusage, user and system) of
// each as <name>-cpu-p50-ms. Each run must have made libcuda.so.1's link
// and rewritten the cache.
//
//	go test -tags e2e ./e2e -run '^$' -bench HookUpdateLDCache -benchtime 30x
func BenchmarkHookUpdateLDCache(b *testing.B) {
	glibc := testutil.GlibcLdconfig(b)
	c := &startCase{host: simHost(b, nil)}
	image := startImage(b, glibc)
	hook := buildExample(b, "nvidia-cdi-hook", true)
	spec := generateSpec(b, c, hook)
	runs := []hookRun{{"nvc", hook}, {"glibc", glibc}}
	if base := os.Getenv(EnvBaselineHook); base != "" {
		runs = append(runs, hookRun{"baseline", base})
	}
	enterPrivateMountNS(b)
	dir := b.TempDir()
	cpu := map[string][]time.Duration{}
	for b.Loop() {
		for _, r := range runs {
			b.StopTimer()
			rootfs := mountHookRoot(b, dir, image, spec)
			b.StartTimer()
			cpu[r.name] = append(cpu[r.name], r.run(b, rootfs))
			b.StopTimer()
			_, err := os.Lstat(filepath.Join(rootfs, libDir, "libcuda.so.1"))
			require.NoError(b, err, "%s: the SONAME link of libcuda.so.1", r.name)
			require.NoError(b, unix.Unmount(rootfs, unix.MNT_DETACH), "unmounting %s", rootfs)
			_, err = os.Stat(filepath.Join(dir, "upper/etc/ld.so.cache"))
			require.NoError(b, err, "%s: the cache was not rewritten", r.name)
			b.StartTimer()
		}
	}
	for _, r := range runs {
		b.ReportMetric(ms(p50(cpu[r.name])), r.name+"-cpu-p50-ms")
	}
}

// hookRun is one program BenchmarkHookUpdateLDCache times.
type hookRun struct{ name, path string }

// run runs the program on rootfs and returns its CPU time.
func (r hookRun) run(b *testing.B, rootfs string) time.Duration {
	cmd := exec.Command(r.path, "update-ldcache", "--folder", libDir)
	cmd.Stdin = strings.NewReader(`{"ociVersion":"1.0.2","id":"b","status":"creating","pid":1,"bundle":"/nonexistent","root":"` + rootfs + `"}`)
	if r.name == "glibc" {
		cmd = exec.Command(r.path, "-r", rootfs, "-C", "/etc/ld.so.cache", "-f", "/etc/ld.so.conf", libDir)
	}
	out, err := cmd.CombinedOutput()
	require.NoError(b, err, "%s: %s", r.name, out)
	ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// mountHookRoot mounts a new overlay of image at dir/rootfs and
// bind-mounts spec's mounts into libDir there; it returns the rootfs.
func mountHookRoot(b *testing.B, dir, image string, spec *cdispecs.Spec) string {
	rootfs, upper, work := filepath.Join(dir, "rootfs"), filepath.Join(dir, "upper"), filepath.Join(dir, "work")
	for _, d := range []string{upper, work} {
		require.NoError(b, os.RemoveAll(d))
		require.NoError(b, os.Mkdir(d, 0o755))
	}
	require.NoError(b, os.MkdirAll(rootfs, 0o755))
	opts := fmt.Sprintf("lowerdir=%s,upperdir=%s,workdir=%s", image, upper, work)
	require.NoError(b, unix.Mount("overlay", rootfs, "overlay", 0, opts), "mounting the overlay %s", opts)
	n := 0
	for _, m := range spec.ContainerEdits.Mounts {
		if !strings.HasPrefix(m.ContainerPath, libDir+"/") {
			continue
		}
		p := filepath.Join(rootfs, m.ContainerPath)
		require.NoError(b, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(b, os.WriteFile(p, nil, 0o644))
		require.NoError(b, unix.Mount(m.HostPath, p, "", unix.MS_BIND, ""), "bind-mounting %s", m.HostPath)
		n++
	}
	require.Greater(b, n, 10, "the spec's mounts into %s", libDir)
	return rootfs
}
