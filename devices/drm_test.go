package devices_test

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-nvc/nvc/devices"
	"github.com/go-nvc/nvc/internal/fakehost"
)

// TestDRM checks a GPU's DRM nodes and by-path links as the simulated
// sysfs and /dev/dri describe them, and what is left out: a node missing
// under the dev root, a link to another node, a GPU without a drm/
// directory.
func TestDRM(t *testing.T) {
	h := genHost(t, nil)
	o := optionsFor(h, devices.Procfs)
	o.Roots.Sys = h.SysRoot
	d := discoverWith(t, o)
	g := d.GPUs[2]
	require.Equal(t, "00000000:47:00.0", g.BusID, "GPU 2's bus id")
	drm, err := d.DRM(g)
	require.NoError(t, err)
	assert.Equal(t, devices.DRM{
		Nodes: []devices.Node{{Path: "/dev/dri/card3", Major: 226, Minor: 3}, {Path: "/dev/dri/renderD130", Major: 226, Minor: 130}},
		Links: []devices.DRMLink{{Path: "/dev/dri/by-path/pci-0000:47:00.0-card", Target: "../card3"},
			{Path: "/dev/dri/by-path/pci-0000:47:00.0-render", Target: "../renderD130"}},
	}, drm, "GPU 2")

	require.NoError(t, os.Remove(h.DevRoot+"/dri/renderD130"))
	require.NoError(t, os.Remove(h.DevRoot+"/dri/by-path/pci-0000:47:00.0-card"))
	require.NoError(t, os.Symlink("../card0", h.DevRoot+"/dri/by-path/pci-0000:47:00.0-card"))
	drm, err = d.DRM(g)
	require.NoError(t, err)
	assert.Equal(t, devices.DRM{Nodes: []devices.Node{{Path: "/dev/dri/card3", Major: 226, Minor: 3}}}, drm,
		"GPU 2 without its render node, its card link pointing at card0")

	require.NoError(t, os.RemoveAll(h.SysRoot+"/bus/pci/devices/0000:47:00.0/drm"))
	drm, err = d.DRM(g)
	require.NoError(t, err)
	assert.Empty(t, drm, "GPU 2 without drm/")

	g.BusID = "07:00.0"
	_, err = d.DRM(g)
	assert.ErrorIs(t, err, devices.ErrInvalid, "malformed bus id")
}

// TestPCIDevices reads the simulated sysfs's PCI functions: the GPUs are
// NVIDIA display controllers, the decoys are not.
func TestPCIDevices(t *testing.T) {
	h := genHost(t, nil)
	devs, err := devices.PCIDevices(h.SysRoot)
	require.NoError(t, err)
	var gpus []string
	for _, d := range devs {
		if d.NVIDIADisplay() {
			gpus = append(gpus, d.BusID)
		}
	}
	assert.Len(t, gpus, 8, "NVIDIA display controllers")
	assert.Len(t, devs, 10, "PCI functions")
	assert.NotContains(t, gpus, fakehost.DecoyVGABusID, "the other vendor's VGA")
	assert.NotContains(t, gpus, fakehost.DecoyBridgeBusID, "NVIDIA's bridge")
	_, err = devices.PCIDevices(t.TempDir())
	assert.Error(t, err, "no bus/pci/devices")
}

func discoverWith(t *testing.T, o *devices.Options) *devices.Host {
	t.Helper()
	d, err := devices.Discover(t.Context(), o)
	require.NoError(t, err)
	return d
}
