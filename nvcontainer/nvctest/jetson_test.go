package nvctest_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-nvc/nvc/nvcontainer/nvctest"
	"github.com/go-nvc/nvc/tegra"
)

// TestJetsonOrin: the simulated Jetson is a Tegra host with the L4T
// release, its mount specs parse, and it has no procfs driver or NVML.
func TestJetsonOrin(t *testing.T) {
	m, err := nvctest.ParseMachine("jetson-orin")
	require.NoError(t, err)
	require.True(t, m.IsTegra())
	assert.False(t, nvctest.DGXA100.IsTegra())
	h := nvctest.NewHost(t, m, nil)
	assert.Nil(t, h.NVML)
	assert.Equal(t, "36.3.0", h.DriverVersion)
	ok, why := tegra.IsTegra(h.Roots)
	assert.True(t, ok, why)
	_, err = os.Stat(filepath.Join(h.Roots.Proc, "driver/nvidia"))
	assert.ErrorIs(t, err, os.ErrNotExist)
	files, err := tegra.Files("/", h.MountSpecDir())
	require.NoError(t, err)
	require.Len(t, files, 3)
	es, err := tegra.Load("/", files)
	require.NoError(t, err)
	assert.NotEmpty(t, es)
	assert.Empty(t, nvctest.NewHost(t, nvctest.DGXA100, nil).MountSpecDir())
}
