package nvcontainer

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/go-nvc/nvc/internal/testutil"
	"github.com/go-nvc/nvc/internal/testutil/container"
)

// addGPUs adds n simulated GPUs to p: a /dev/nvidiaN node (195:N) and a
// /proc/driver/nvidia/gpus/<bus id> directory each, made on the host for
// the benchmark (the fake host's NVML mocks stop at 8).
func (h *testHost) addGPUs(tb testing.TB, p *Plan, n int) {
	tb.Helper()
	dir := tb.TempDir()
	for i := range n {
		busID := fmt.Sprintf("00000000:%02x:00.0", i+1)
		proc := filepath.Join(dir, "gpus", busID[4:])
		node := filepath.Join(dir, "nvidia"+strconv.Itoa(i))
		require.NoError(tb, os.MkdirAll(proc, 0o555))
		require.NoError(tb, os.WriteFile(filepath.Join(proc, "information"), []byte("Model: simulated\n"), 0o444))
		require.NoError(tb, unix.Mknod(node, unix.S_IFCHR|0o666, int(unix.Mkdev(195, uint32(i)))))
		p.GPUs = append(p.GPUs, PlannedGPU{Index: i, Minor: uint32(i), BusID: busID})
		p.Tmpfs[0].Mounts = append(p.Tmpfs[0].Mounts, Mount{Kind: MountProc, Source: proc,
			Target: "/proc/driver/nvidia/gpus/" + busID[4:], Options: procOpts, Dir: true})
		p.Mounts = append(p.Mounts, Mount{Kind: MountDevice, Source: node, Target: "/dev/nvidia" + strconv.Itoa(i),
			Options: deviceOpts, Device: &DeviceNumber{Major: 195, Minor: uint32(i)}})
		p.CgroupRules = append(p.CgroupRules, DeviceRule{Type: "c", Major: 195, Minor: uint32(i), Access: "rw"})
	}
}

// BenchmarkApply applies a plan with every capability and 1, 8 or 64 GPUs
// to a fresh pivoted container (started outside the timer), its rootfs on
// the disk (ext4 here) like an image's or on tmpfs (the difference is what
// creating placeholders and links costs on the disk); for 8 GPUs also in a
// hook-time container with the new mount API and with libnvidia-container's
// method (bind by path, remount).
//
// Metrics: p50-ns, the median iteration; cpu-ns, the mean CPU time the
// process used during Apply (user and system, all threads: what Apply
// costs when the machine is shared); <step>-ns, the mean time spent in
// each step of Apply (see Step), measured between its fault points;
// floor-ns, the median time of the floor measured in the same iteration on
// the same filesystem: creating as many empty files as Apply creates
// entries in the rootfs (placeholders, links, the new cache), with bare
// openat(O_CREAT|O_EXCL) and close in one directory; x-floor, p50-ns over
// floor-ns.
func BenchmarkApply(b *testing.B) {
	h := newTestHost(b)
	disk := benchFS{start: func(b *testing.B) *container.Container { return startIn(b, fedoraLayout, true) },
		floorDir: func(b *testing.B) string { return b.TempDir() }}
	mem := benchFS{start: func(b *testing.B) *container.Container {
		return container.Start(b, &container.Options{Rootfs: shmRootfs(b), PivotRoot: true})
	}, floorDir: func(b *testing.B) string { return shmDir(b) }}
	// as the CLI and the hook apply: with the driver's library readings
	libs := &ApplyOptions{Libraries: h.host.Driver}
	for _, n := range []int{1, 8, 64} {
		p := h.testPlan(b, fedoraLayout, 0)
		h.addGPUs(b, p, n)
		b.Run(fmt.Sprintf("gpus=%d/fs=disk", n), func(b *testing.B) { benchApply(b, p, disk, libs) })
		b.Run(fmt.Sprintf("gpus=%d/fs=tmpfs", n), func(b *testing.B) { benchApply(b, p, mem, libs) })
	}
	p := h.testPlan(b, fedoraLayout, 0)
	h.addGPUs(b, p, 8)
	hook := benchFS{start: func(b *testing.B) *container.Container { return startIn(b, fedoraLayout, false) },
		floorDir: disk.floorDir}
	b.Run("gpus=8/hook/new", func(b *testing.B) { benchApply(b, p, hook, libs) })
	b.Run("gpus=8/hook/legacy", func(b *testing.B) {
		benchApply(b, p, hook, &ApplyOptions{LegacyMounts: true, Libraries: h.host.Driver})
	})
}

// benchFS is where a benchmark's containers live: start makes one (its
// rootfs on some filesystem), floorDir a directory on the same one.
type benchFS struct {
	start    func(*testing.B) *container.Container
	floorDir func(*testing.B) string
}

// shmRootfs is a Fedora-layout image on /dev/shm, removed when tb ends.
func shmRootfs(tb testing.TB) string {
	dir := shmDir(tb)
	testutil.BuildTree(tb, dir, rootfsSpec(fedoraLayout))
	return dir
}

// shmDir is a new directory on /dev/shm, removed when tb ends.
func shmDir(tb testing.TB) string {
	dir, err := os.MkdirTemp("/dev/shm", "nvc-bench-")
	if err != nil {
		testutil.Unavailable(tb, "needs /dev/shm: %v", err)
	}
	tb.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

func benchApply(b *testing.B, p *Plan, fsys benchFS, opts *ApplyOptions) {
	var times, floors []time.Duration
	var cpu time.Duration
	steps := map[Step]time.Duration{}
	for b.Loop() {
		b.StopTimer()
		c := fsys.start(b)
		cpu0 := cpuTime(b)
		b.StartTimer()
		o, done := stepTimer(opts, steps)
		t0 := time.Now()
		require.NoError(b, p.Apply(context.Background(), ctrOf(c), o))
		times = append(times, time.Since(t0))
		b.StopTimer()
		cpu += cpuTime(b) - cpu0
		done()
		floors = append(floors, createFloor(b, fsys.floorDir(b), createdEntries(p)))
		b.StartTimer()
	}
	p50, floor := median(times), median(floors)
	b.ReportMetric(float64(p50.Nanoseconds()), "p50-ns")
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(len(times)), "cpu-ns")
	b.ReportMetric(float64(floor.Nanoseconds()), "floor-ns")
	b.ReportMetric(float64(p50)/float64(floor), "x-floor")
	for s, d := range steps {
		b.ReportMetric(float64(d.Nanoseconds())/float64(len(times)), string(s)+"-ns")
	}
}

func median(d []time.Duration) time.Duration {
	slices.Sort(d)
	return d[len(d)/2]
}

// cpuTime is the user and system time the process has used so far.
func cpuTime(tb testing.TB) time.Duration {
	var ru unix.Rusage
	require.NoError(tb, unix.Getrusage(unix.RUSAGE_SELF, &ru))
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// createdEntries is how many entries Apply creates in a rootfs that has
// none of the plan's targets: a placeholder per mount outside the plan's
// tmpfs, a directory per tmpfs, a link per symlink and the new cache.
func createdEntries(p *Plan) int {
	n := len(p.Tmpfs) + len(p.Symlinks) + 1
	for _, m := range p.Mounts {
		if !slices.ContainsFunc(p.Tmpfs, func(t Tmpfs) bool { return inside(t.Target, m.Target) }) {
			n++
		}
	}
	return n
}

// createFloor times creating n empty files in a new directory below dir
// with bare openat(O_CREAT|O_EXCL) and close: what Apply cannot beat on
// that filesystem.
func createFloor(tb testing.TB, dir string, n int) time.Duration {
	d, err := os.MkdirTemp(dir, "floor-")
	require.NoError(tb, err)
	defer os.RemoveAll(d)
	dfd, err := unix.Open(d, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	require.NoError(tb, err)
	defer unix.Close(dfd)
	t0 := time.Now()
	for i := range n {
		fd, err := unix.Openat(dfd, "f"+strconv.Itoa(i), unix.O_RDONLY|unix.O_CREAT|unix.O_EXCL|unix.O_CLOEXEC, 0o644)
		require.NoError(tb, err)
		unix.Close(fd)
	}
	return time.Since(t0)
}

// stepTimer returns opts with a fault hook that adds the time from each
// point to the next to the step of the first, and a function to call when
// Apply has returned, which adds the rest (releasing what undo would have
// used) to the last step, commit.
func stepTimer(opts *ApplyOptions, steps map[Step]time.Duration) (*ApplyOptions, func()) {
	o := &ApplyOptions{}
	if opts != nil {
		*o = *opts
	}
	last, step := time.Now(), StepCheck
	o.fault = func(s Step, _ string) error {
		now := time.Now()
		steps[step] += now.Sub(last)
		last, step = now, s
		return nil
	}
	return o, func() { steps[step] += time.Since(last) }
}

// BenchmarkLDCache times the ld.so.cache step alone (a plan holding only
// it, applied again and again to a configured container) against the
// alternative libnvidia-container uses: glibc's ldconfig run on the same
// container root (ldconfig -r, as the host's binary).
func BenchmarkLDCache(b *testing.B) {
	h := newTestHost(b)
	p := h.testPlan(b, fedoraLayout, 8)
	c := startIn(b, fedoraLayout, true)
	require.NoError(b, p.Apply(context.Background(), ctrOf(c), nil))
	only := &Plan{Version: PlanVersion, LDCache: p.LDCache}
	b.Run("apply", func(b *testing.B) {
		for b.Loop() {
			require.NoError(b, only.Apply(context.Background(), ctrOf(c), nil))
		}
	})
	ldconfig := testutil.RequireCommand(b, "ldconfig")
	root := filepath.Join("/proc", strconv.Itoa(c.PID), "root")
	args := append([]string{"-r", root, "-X", "-C", "/etc/ld.so.cache"}, p.LDCache.Dirs...)
	b.Run("ldconfig", func(b *testing.B) {
		for b.Loop() {
			out, err := exec.Command(ldconfig, args...).CombinedOutput()
			require.NoError(b, err, "ldconfig: %s", out)
		}
	})
}
