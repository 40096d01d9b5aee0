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
	"github.com/go-nvc/nvc/nvcontainer/request"
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

// TestHostOptionsNVML: HostOptions.NVML (a helper process's NVML in a
// build without cgo) is started only where the in-process NVML would be:
// PrepareHost's Auto and NVML backends discover and read the versions
// through it, in one session; its Procfs backend and PrepareHostFor's
// procfs path leave it unstarted (PrepareHostFor hands it on as Host.NVML);
// a MIG device named by UUID on a MIG host sends PrepareHostFor to it.
func TestHostOptionsNVML(t *testing.T) {
	fh, err := fakehost.Generate(t.TempDir(), &fakehost.Options{MIG: map[int][]string{1: {"3g.20gb"}}})
	require.NoError(t, err)
	roots := driver.Roots{Driver: fh.Root, Proc: fh.ProcRoot, Dev: fh.DevRoot}
	migUUID, err := fh.NVML.DeviceByIndex(1)
	require.NoError(t, err)
	mig, err := migUUID.MIGDeviceByIndex(0)
	require.NoError(t, err)
	uuid, err := mig.UUID()
	require.NoError(t, err)
	byUUID := &request.Request{Devices: request.Devices{Mode: request.DevicesList, IDs: []string{uuid}}}
	all := &request.Request{Devices: request.Devices{Mode: request.DevicesAll}}
	for _, tc := range []struct {
		name    string
		backend devices.Backend
		req     *request.Request // nil: PrepareHost
		starts  int
		want    devices.Backend
	}{
		{"PrepareHost auto", "", nil, 1, devices.NVML},
		{"PrepareHost nvml", devices.NVML, nil, 1, devices.NVML},
		{"PrepareHost procfs", devices.Procfs, nil, 0, devices.Procfs},
		{"PrepareHostFor", "", all, 0, devices.Procfs},
		{"PrepareHostFor, MIG UUID", "", byUUID, 1, devices.NVML},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := &sessionNVML{NVMLInterface: fh.NVML}
			o := &nvcontainer.HostOptions{Driver: &driver.Options{Roots: roots}, Backend: tc.backend, NVML: n}
			var h *nvcontainer.Host
			if tc.req == nil {
				h, _, err = nvcontainer.PrepareHost(context.Background(), o)
			} else {
				h, _, err = nvcontainer.PrepareHostFor(context.Background(), o, tc.req)
			}
			require.NoError(t, err)
			assert.Equal(t, tc.starts, n.starts, "NVML sessions started")
			assert.Equal(t, tc.want, h.Devices.Backend, "backend")
			src := driver.FromProcfs
			if tc.starts > 0 {
				src = driver.FromNVML
			}
			assert.Equal(t, src, h.Driver.Version().Source, "driver version source")
			if tc.req != nil && tc.starts == 0 {
				assert.Same(t, n, h.NVML, "Host.NVML")
			}
		})
	}
}
