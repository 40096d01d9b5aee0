package toolkit_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-nvc/nvc/devices"
	"github.com/go-nvc/nvc/nvcontainer/toolkit"
)

// TestHelperNVML: a cgo build loads NVML in-process and gets no helper; a
// build without cgo gets the helper's client, which runs as
// [nvidia-container-cli] user (an unknown user fails its Init, naming
// it) and runs nothing before Init.
func TestHelperNVML(t *testing.T) {
	t.Setenv(devices.NVMLHelperEnv, "/nonexistent/nvc-nvml")
	cfg := toolkit.DefaultConfig()
	cfg.CLI.User = "nvc-no-such-user"
	n := toolkit.HelperNVML(cfg)
	if devices.CanLoadNVML() {
		assert.Nil(t, n, "a cgo build loads NVML itself")
		return
	}
	require.NotNil(t, n)
	err := n.Init()
	require.Error(t, err)
	assert.Contains(t, err.Error(), `NVML helper /nonexistent/nvc-nvml: NVML helper user "nvc-no-such-user"`)
}
