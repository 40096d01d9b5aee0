package nvctest_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-nvc/nvc/devices"
	"github.com/go-nvc/nvc/driver"
	"github.com/go-nvc/nvc/nvcontainer/nvctest"
)

// TestWSLMachine: "wsl" is a machine --simulate takes; its host has no
// NVML and no /proc/driver/nvidia, and opens as a WSL2 host (the WSL
// backend, /dev/dxg, the driver store's version and dir).
func TestWSLMachine(t *testing.T) {
	m, err := nvctest.ParseMachine("wsl")
	require.NoError(t, err)
	assert.Equal(t, nvctest.WSL, m)
	assert.Contains(t, nvctest.Machines(), nvctest.WSL)
	for _, ver := range []string{"", "560.94"} {
		t.Run("version-"+ver, func(t *testing.T) {
			h := nvctest.NewHost(t, nvctest.WSL, &nvctest.Options{DriverVersion: ver})
			want := ver
			if want == "" {
				want = nvctest.WSLDriverVersion
			}
			assert.Equal(t, want, h.DriverVersion)
			assert.Nil(t, h.NVML, "a WSL host's NVML")
			assert.NoDirExists(t, filepath.Join(h.Roots.Proc, "driver/nvidia"))
			assert.FileExists(t, filepath.Join(h.Roots.Driver, nvctest.WSLDriverStore, "libcuda.so.1.1"))
			_, err := os.Stat(filepath.Join(h.Roots.Dev, "dxg"))
			require.NoError(t, err, "/dev/dxg")
			host, err := h.Open(devices.Auto)
			require.NoError(t, err)
			assert.Equal(t, devices.WSL, host.Devices.Backend)
			assert.Equal(t, driver.Version{NVRM: want, Source: driver.FromDriverStore}, host.Driver.Version())
			assert.Equal(t, nvctest.WSLDriverStore, host.Driver.WSLDriverStore())
		})
	}
	_, err = nvctest.Generate(t.TempDir(), nvctest.WSL, &nvctest.Options{DriverVersion: "550.54.15"})
	assert.ErrorContains(t, err, "550.54.15", "a WSL host of a Linux driver version")
}
