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
// to a fresh pivoted container (started outside the timer); p50-ns is the
// median of the iterations.
func BenchmarkApply(b *testing.B) {
	h := newTestHost(b)
	for _, n := range []int{1, 8, 64} {
		b.Run(fmt.Sprintf("gpus=%d", n), func(b *testing.B) {
			p := h.testPlan(b, fedoraLayout, 0)
			h.addGPUs(b, p, n)
			benchApply(b, p, fedoraLayout)
		})
	}
}

func benchApply(b *testing.B, p *Plan, l Layout) {
	var times []time.Duration
	for b.Loop() {
		b.StopTimer()
		c := startIn(b, l, true)
		b.StartTimer()
		start := time.Now()
		if err := p.Apply(context.Background(), ctrOf(c), nil); err != nil {
			b.Fatal(err)
		}
		times = append(times, time.Since(start))
	}
	slices.Sort(times)
	b.ReportMetric(float64(times[len(times)/2].Nanoseconds()), "p50-ns")
	b.ReportMetric(float64(mountCount(p)), "mounts")
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
