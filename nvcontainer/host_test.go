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

func TestOpenHost(t *testing.T) {
	fh, err := fakehost.Generate(t.TempDir(), nil)
	require.NoError(t, err)
	d := &driver.Options{Roots: driver.Roots{Driver: fh.Root, Proc: fh.ProcRoot, Dev: fh.DevRoot}}
	// Auto loads the simulated host's libnvidia-ml.so.1, which is no NVML:
	// discovery falls back to procfs and says why.
	h, err := nvcontainer.OpenHost(context.Background(), d, "")
	require.NoError(t, err)
	assert.Equal(t, devices.Procfs, h.Devices.Backend, "auto on a host without NVML")
	assert.NotEmpty(t, h.Devices.NVMLError, "auto on a host without NVML: want a reason")
	assert.Len(t, h.Devices.GPUs, 8, "auto on a host without NVML")
	v := h.Driver.Version()
	assert.Equal(t, fh.DriverVersion, v.NVRM, "driver version")
	assert.Equal(t, driver.FromProcfs, v.Source, "driver version source")
	d.NVML = fh.NVML
	h, err = nvcontainer.OpenHost(context.Background(), d, devices.NVML)
	require.NoError(t, err)
	assert.Equal(t, devices.NVML, h.Devices.Backend, "with NVML")
	assert.Equal(t, driver.FromNVML, h.Driver.Version().Source, "with NVML: the driver's versions are NVML's")
	assert.Equal(t, fh.CUDAVersion, h.Driver.Version().CUDA, "with NVML: driver's CUDA version")
	_, err = nvcontainer.OpenHost(context.Background(), &driver.Options{Roots: driver.Roots{Driver: fh.Root, Proc: t.TempDir()}}, devices.Procfs)
	assert.Error(t, err, "OpenHost on an empty procfs")
}
