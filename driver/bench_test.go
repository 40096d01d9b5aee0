package driver_test

import (
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/go-nvc/nvc/capabilities"
	"github.com/go-nvc/nvc/driver"
	"github.com/go-nvc/nvc/internal/fakehost"
	"github.com/go-nvc/nvc/internal/testutil"
)

// BenchmarkFiles measures Files on a generated host (goal for all: 1 ms)
// called again and again on one Driver, as a long-lived process (a
// device plugin, a CDI generator) does. The host is generated, then left
// a second and a half, as a real driver is installed well before
// containers start: Files keeps lookups only in directories whose last
// change is a second old. cpu-ns/op is the process's CPU time (all
// threads) per call, which a loaded machine inflates less than wall time.
func BenchmarkFiles(b *testing.B) {
	_, d := generate(b, fakehost.Options{}, driver.Options{})
	time.Sleep(1500 * time.Millisecond)
	for _, caps := range []capabilities.Set{capabilities.All, capabilities.HookDefault} {
		b.Run(caps.String(), func(b *testing.B) {
			cpu0 := processCPU(b)
			for b.Loop() {
				_, err := d.Files(caps)
				require.NoError(b, err)
			}
			b.ReportMetric(float64(processCPU(b)-cpu0)/float64(b.N), "cpu-ns/op")
		})
	}
}

// BenchmarkFilesFirstCall measures the first Files call of a new Driver
// (Open is not timed), which is what a one-shot nvidia-container-cli
// process makes: nothing is known from an earlier call.
func BenchmarkFilesFirstCall(b *testing.B) {
	h, _ := generate(b, fakehost.Options{}, driver.Options{})
	time.Sleep(1500 * time.Millisecond)
	o := &driver.Options{Roots: driver.Roots{Driver: h.Root, Proc: h.ProcRoot, Dev: h.DevRoot}, NVML: h.NVML}
	for b.Loop() {
		b.StopTimer()
		d, err := driver.Open(o)
		require.NoError(b, err)
		b.StartTimer()
		_, err = d.Files(capabilities.All)
		require.NoError(b, err)
	}
}

// processCPU is the process's user and system time so far, in ns.
func processCPU(b *testing.B) int64 {
	var ru syscall.Rusage
	require.NoError(b, syscall.Getrusage(syscall.RUSAGE_SELF, &ru))
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// BenchmarkOpen measures Open: the NVML mock's version, the cache parsed
// and indexed.
func BenchmarkOpen(b *testing.B) {
	h, err := fakehost.Generate(b.TempDir(), nil)
	require.NoError(b, err)
	o := &driver.Options{Roots: driver.Roots{Driver: h.Root, Proc: h.ProcRoot, Dev: h.DevRoot}, NVML: h.NVML}
	for b.Loop() {
		_, err := driver.Open(o)
		require.NoError(b, err)
	}
}

// BenchmarkLdconfigP is the alternative a script runs to find the driver's
// libraries: glibc's `ldconfig -p` on the same cache (a listing only: no
// resolution, no checks). Compare with BenchmarkFiles/all of the same run.
func BenchmarkLdconfigP(b *testing.B) {
	ldconfig := testutil.GlibcLdconfig(b)
	h, err := fakehost.Generate(b.TempDir(), nil)
	require.NoError(b, err)
	cache := filepath.Join(h.Root, "etc/ld.so.cache")
	for b.Loop() {
		require.NoError(b, exec.Command(ldconfig, "-p", "-C", cache).Run())
	}
}
