package devices_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/go-nvc/nvc/devices"
)

// BenchmarkDiscover measures discovery of a simulated DGX A100 (8 GPUs, GPU
// 1 in MIG mode) by each backend. The NVML figure is the simulator's fake
// NVML (package fakenvml): it counts this package's work, not a real
// driver's start-up (hundreds of milliseconds on real multi-GPU hosts), so
// it is a lower bound. The
// procfs runs get an NVML that panics when called: procfs needs none.
func BenchmarkDiscover(b *testing.B) {
	h := genHost(b, nil)
	for _, backend := range []devices.Backend{devices.Procfs, devices.NVML} {
		b.Run(string(backend), func(b *testing.B) {
			o := optionsFor(h, backend)
			for b.Loop() {
				_, err := devices.Discover(context.Background(), o)
				require.NoError(b, err)
			}
		})
	}
}

// BenchmarkDiscoverRatio runs both backends in the same loop and reports
// fake-NVML time over procfs time.
func BenchmarkDiscoverRatio(b *testing.B) {
	h := genHost(b, nil)
	procfs, byNVML := optionsFor(h, devices.Procfs), optionsFor(h, devices.NVML)
	var tp, tn time.Duration
	for b.Loop() {
		t0 := time.Now()
		_, err1 := devices.Discover(context.Background(), procfs)
		t1 := time.Now()
		_, err2 := devices.Discover(context.Background(), byNVML)
		tp, tn = tp+t1.Sub(t0), tn+time.Since(t1)
		require.NoError(b, err1, "procfs")
		require.NoError(b, err2, "NVML")
	}
	b.ReportMetric(float64(tn)/float64(tp), "nvml-fake/procfs")
	b.ReportMetric(float64(tp.Nanoseconds())/float64(b.N), "procfs-ns/op")
	b.ReportMetric(float64(tn.Nanoseconds())/float64(b.N), "nvml-fake-ns/op")
}
