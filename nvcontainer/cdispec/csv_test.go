package cdispec_test

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-nvc/nvc/driver"
	"github.com/go-nvc/nvc/internal/testutil"
	"github.com/go-nvc/nvc/nvcontainer"
	"github.com/go-nvc/nvc/nvcontainer/cdispec"
	"github.com/go-nvc/nvc/nvcontainer/nvctest"
	"github.com/go-nvc/nvc/nvcontainer/request"
	"github.com/go-nvc/nvc/tegra"
)

// TestFromCSVPlan: a CSV plan (the simulated Jetson Orin) is a valid spec
// with device 0 and all, whose edits are the Tegra nodes; the files are
// common mounts, the links and loader cache dirs hooks, and no CUDA
// compat hook is made.
func TestFromCSVPlan(t *testing.T) {
	testutil.RequireRoot(t) // real nodes
	sim := nvctest.NewHost(t, nvctest.JetsonOrin, &nvctest.Options{RealNodes: true})
	h, err := nvcontainer.OpenCSVHost(driver.Roots{Driver: sim.Roots.Driver}, "/", tegra.DefaultFiles(sim.MountSpecDir()))
	require.NoError(t, err)
	req := &request.Request{Devices: request.Devices{Mode: request.DevicesAll}}
	p, err := nvcontainer.NewCSVPlan(h, req, nvcontainer.Container{}, nil)
	require.NoError(t, err)
	spec, err := cdispec.FromPlan(p, nil)
	require.NoError(t, err)
	require.Len(t, spec.Devices, 2)
	assert.Equal(t, "0", spec.Devices[0].Name)
	assert.Equal(t, "all", spec.Devices[1].Name)
	assert.Len(t, spec.Devices[0].ContainerEdits.DeviceNodes, 11)
	assert.Empty(t, spec.ContainerEdits.DeviceNodes, "every node is the iGPU's")
	var mounts []string
	for _, m := range spec.ContainerEdits.Mounts {
		mounts = append(mounts, m.ContainerPath)
		assert.Equal(t, filepath.Join(sim.Roots.Driver, m.ContainerPath), m.HostPath)
	}
	assert.Contains(t, mounts, sim.LibDir+"/libcuda.so.1.1")
	var hooks []string
	for _, hk := range spec.ContainerEdits.Hooks {
		hooks = append(hooks, hk.Args[1])
	}
	assert.Equal(t, []string{"create-symlinks", "update-ldcache"}, hooks)
}
