package nvcontainer_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/go-nvc/nvc/capabilities"
	"github.com/go-nvc/nvc/devices"
	"github.com/go-nvc/nvc/internal/testutil"
	"github.com/go-nvc/nvc/nvcontainer"
)

// scaledHost returns a copy of h's host with n GPUs: the generated DGX's
// GPUs repeated with their own minor, bus id, UUID, node and proc dir.
// Planning reads none of those paths, so they need not exist.
func scaledHost(h *nvcontainer.Host, n int) *nvcontainer.Host {
	dev := *h.Devices
	dev.GPUs = make([]devices.GPU, n)
	for i := range dev.GPUs {
		g := h.Devices.GPUs[i%len(h.Devices.GPUs)]
		g.Index, g.Minor = i, uint32(i)
		g.BusID = fmt.Sprintf("00000000:%02x:00.0", i+1)
		g.UUID = fmt.Sprintf("GPU-00000000-0000-0000-0000-%012d", i)
		g.Node = devices.Node{Path: fmt.Sprintf("/dev/nvidia%d", i), Major: devices.MajorNvidia, Minor: uint32(i)}
		g.ProcDir = "/proc/driver/nvidia/gpus/" + g.BusID[4:]
		dev.GPUs[i] = g
	}
	return &nvcontainer.Host{Driver: h.Driver, Devices: &dev}
}

// BenchmarkNewPlan plans every capability for 1, 8 and 64 simulated GPUs
// in a Debian rootfs, and measures driver.Files alone (the ld.so.cache and
// ELF lookups every plan starts with) to show what planning adds.
//
//	go test ./nvcontainer -run '^$' -bench NewPlan -benchtime 200x
func BenchmarkNewPlan(b *testing.B) {
	h := newTestHost(b, nil)
	rootfs := testutil.Tree(b, compatRootfs("570.86.10"))
	req := capsRequest(capabilities.All)
	b.Run("driver.Files", func(b *testing.B) {
		for b.Loop() {
			_, err := h.host.Driver.Files(capabilities.All)
			require.NoError(b, err)
		}
	})
	for _, n := range []int{1, 8, 64} {
		host := scaledHost(h.host, n)
		b.Run(fmt.Sprintf("gpus=%d", n), func(b *testing.B) {
			for b.Loop() {
				p, err := nvcontainer.NewPlan(host, req, nvcontainer.Container{Rootfs: rootfs}, nil)
				require.NoError(b, err)
				require.Len(b, p.GPUs, n)
			}
		})
	}
}
