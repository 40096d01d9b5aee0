//go:build cgo

package devices_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-nvc/nvc/devices"
	"github.com/go-nvc/nvc/internal/fakehost"
	"github.com/go-nvc/nvc/internal/nvmlmock"
)

// TestSnapshotDiscoversAsGoNVMLMock: on every board, with GPU 1 in MIG
// mode, discovery through a snapshot (JSON and back) of go-nvml's mock
// gives the Host discovery gives on the mock itself.
func TestSnapshotDiscoversAsGoNVMLMock(t *testing.T) {
	for machine, b := range boards {
		t.Run(machine, func(t *testing.T) {
			mig := map[int][]string{1: b.mig}
			h := genHost(t, &fakehost.Options{Machine: machine, MIG: mig})
			s, err := nvmlmock.New(machine, &nvmlmock.Options{MIG: mig})
			require.NoError(t, err)
			o := optionsFor(h, devices.NVML)
			o.NVML = devices.NewNVMLFromGoNVML(s)
			live, err := devices.Discover(context.Background(), o)
			require.NoError(t, err)
			o.NVML = throughJSON(t, devices.NewNVMLFromGoNVML(s))
			got, err := devices.Discover(context.Background(), o)
			require.NoError(t, err)
			assert.Equal(t, live, got, "go-nvml mock, its snapshot")
			assert.NotEmpty(t, got.GPUs[1].MIGDevices, "MIG devices")
		})
	}
}
