package nvcontainer_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-nvc/nvc/devices"
	"github.com/go-nvc/nvc/driver"
	"github.com/go-nvc/nvc/internal/fakehost"
	"github.com/go-nvc/nvc/nvcontainer"
)

// TestOpenHostStartsNVMLOnce: the driver alone reads the versions, and
// when discovery uses NVML, OpenHost opens the driver inside discovery's
// NVML session, so NVML (slow to start on a real host) starts once and
// the driver's versions are NVML's. Through procfs the driver is asked
// NVML only when it is given one.
func TestOpenHostStartsNVMLOnce(t *testing.T) {
	fh, err := fakehost.Generate(t.TempDir(), nil)
	require.NoError(t, err)
	fromNVML := driver.Version{NVRM: fh.DriverVersion, Source: driver.FromNVML, CUDA: fh.CUDAVersion}
	for _, tc := range []struct {
		name    string
		backend devices.Backend
		starts  int
	}{
		{"nvml", devices.NVML, 1},
		{"auto", devices.Auto, 1},
		{"procfs", devices.Procfs, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := &sessionNVML{NVMLInterface: fh.NVML}
			h, err := nvcontainer.OpenHost(context.Background(), &driver.Options{Roots: driver.Roots{Driver: fh.Root, Proc: fh.ProcRoot, Dev: fh.DevRoot}, NVML: n}, tc.backend)
			require.NoError(t, err)
			assert.Equal(t, tc.starts, n.starts, "NVML sessions started")
			assert.Zero(t, n.depth, "NVML left initialised")
			assert.Equal(t, fromNVML, h.Driver.Version(), "driver version")
		})
	}
}

// sessionNVML counts the NVML sessions started: Init and Shutdown nest,
// as NVML's do, and a session starts when Init is called with none open.
type sessionNVML struct {
	devices.NVMLInterface
	depth, starts int
}

func (n *sessionNVML) Init() error {
	if n.depth == 0 {
		n.starts++
	}
	n.depth++
	return n.NVMLInterface.Init()
}

func (n *sessionNVML) Shutdown() error {
	n.depth--
	return n.NVMLInterface.Shutdown()
}
