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
		if err := os.MkdirAll(proc, 0o555); err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(proc, "information"), []byte("Model: simulated\n"), 0o444); err != nil {
			tb.Fatal(err)
		}
		if err := unix.Mknod(node, unix.S_IFCHR|0o666, int(unix.Mkdev(195, uint32(i)))); err != nil {
			tb.Fatal(err)
		}
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
// Metrics: p50-ns, the median iteration; <step>-ns, the mean time spent
// in each step of Apply (see Step), measured between its fault points.
func BenchmarkApply(b *testing.B) {
	h := newTestHost(b)
	disk := func(b *testing.B) *container.Container { return startIn(b, fedoraLayout, true) }
	mem := func(b *testing.B) *container.Container {
		return container.Start(b, &container.Options{Rootfs: shmRootfs(b), PivotRoot: true})
	}
	for _, n := range []int{1, 8, 64} {
		p := h.testPlan(b, fedoraLayout, 0)
		h.addGPUs(b, p, n)
		b.Run(fmt.Sprintf("gpus=%d/fs=disk", n), func(b *testing.B) { benchApply(b, p, disk, nil) })
		b.Run(fmt.Sprintf("gpus=%d/fs=tmpfs", n), func(b *testing.B) { benchApply(b, p, mem, nil) })
	}
	p := h.testPlan(b, fedoraLayout, 0)
	h.addGPUs(b, p, 8)
	hook := func(b *testing.B) *container.Container { return startIn(b, fedoraLayout, false) }
	b.Run("gpus=8/hook/new", func(b *testing.B) { benchApply(b, p, hook, nil) })
	b.Run("gpus=8/hook/legacy", func(b *testing.B) { benchApply(b, p, hook, &ApplyOptions{LegacyMounts: true}) })
}

// shmRootfs is a Fedora-layout image on /dev/shm, removed when b ends.
func shmRootfs(b testing.TB) string {
	dir, err := os.MkdirTemp("/dev/shm", "nvc-bench-")
	if err != nil {
		testutil.Unavailable(b, "needs /dev/shm: %v", err)
	}
	b.Cleanup(func() { os.RemoveAll(dir) })
	testutil.BuildTree(b, dir, rootfsSpec(fedoraLayout))
	return dir
}

func benchApply(b *testing.B, p *Plan, start func(*testing.B) *container.Container, opts *ApplyOptions) {
	var times []time.Duration
	steps := map[Step]time.Duration{}
	for b.Loop() {
		b.StopTimer()
		c := start(b)
		o, done := stepTimer(opts, steps)
		b.StartTimer()
		t0 := time.Now()
		if err := p.Apply(context.Background(), ctrOf(c), o); err != nil {
			b.Fatal(err)
		}
		times = append(times, time.Since(t0))
		done()
	}
	slices.Sort(times)
	b.ReportMetric(float64(times[len(times)/2].Nanoseconds()), "p50-ns")
	for s, d := range steps {
		b.ReportMetric(float64(d.Nanoseconds())/float64(len(times)), string(s)+"-ns")
	}
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
	if err := p.Apply(context.Background(), ctrOf(c), nil); err != nil {
		b.Fatal(err)
	}
	only := &Plan{Version: PlanVersion, LDCache: p.LDCache}
	b.Run("apply", func(b *testing.B) {
		for b.Loop() {
			if err := only.Apply(context.Background(), ctrOf(c), nil); err != nil {
				b.Fatal(err)
			}
		}
	})
	ldconfig := testutil.RequireCommand(b, "ldconfig")
	root := filepath.Join("/proc", strconv.Itoa(c.PID), "root")
	args := append([]string{"-r", root, "-X", "-C", "/etc/ld.so.cache"}, p.LDCache.Dirs...)
	b.Run("ldconfig", func(b *testing.B) {
		for b.Loop() {
			if out, err := exec.Command(ldconfig, args...).CombinedOutput(); err != nil {
				b.Fatalf("ldconfig: %v: %s", err, out)
			}
		}
	})
}
