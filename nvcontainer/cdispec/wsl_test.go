package cdispec_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-nvc/nvc/devices"
	"github.com/go-nvc/nvc/nvcontainer/cdispec"
	"github.com/go-nvc/nvc/nvcontainer/nvctest"
)

// TestFromHostWSL: a WSL2 host's spec, as the NVIDIA Container Toolkit's
// wsl mode writes it, has one device, "all" (even with NoAllDevice),
// whose edits are /dev/dxg; the spec-wide edits bind libdxcore.so and
// the driver store files at their host paths, link nvidia-smi into
// /usr/bin and libcuda.so.1 in the store, update the loader cache for the
// store, and have no enable-cuda-compat hook and no /dev/dxg of their own.
func TestFromHostWSL(t *testing.T) {
	h := openTestHost(t, nvctest.NewHost(t, nvctest.WSL, nil), devices.Auto)
	store := nvctest.WSLDriverStore
	for _, opts := range []*cdispec.Options{nil, {NoAllDevice: true}, allStrategies} {
		spec := fromHost(t, h, opts)
		require.Equal(t, []string{"all"}, deviceNames(spec))
		assert.Equal(t, []string{devices.DevDXG}, nodePaths(spec.Devices[0].ContainerEdits), "the all device's nodes")
		assert.Empty(t, spec.ContainerEdits.DeviceNodes, "spec-wide nodes")
		var mounts []string
		for _, m := range spec.ContainerEdits.Mounts {
			mounts = append(mounts, m.ContainerPath)
		}
		assert.Contains(t, mounts, "/usr/lib/wsl/lib/libdxcore.so")
		for _, n := range []string{"libcuda.so.1.1", "libcuda_loader.so", "libnvidia-ml_loader.so", "nvcubins.bin", "nvidia-smi"} {
			assert.Contains(t, mounts, store+"/"+n)
		}
		var hooks []string
		for _, hk := range spec.ContainerEdits.Hooks {
			hooks = append(hooks, strings.Join(hk.Args[1:], " "))
		}
		assert.False(t, slices.ContainsFunc(hooks, func(s string) bool { return strings.HasPrefix(s, "enable-cuda-compat") }), "hooks %q", hooks)
		assert.True(t, slices.ContainsFunc(hooks, func(s string) bool {
			return strings.HasPrefix(s, "create-symlinks") && strings.Contains(s, store+"/nvidia-smi::/usr/bin/nvidia-smi") &&
				strings.Contains(s, "libcuda.so.1.1::"+store+"/libcuda.so.1")
		}), "hooks %q: want the nvidia-smi and libcuda.so.1 links", hooks)
		assert.True(t, slices.ContainsFunc(hooks, func(s string) bool {
			return strings.HasPrefix(s, "update-ldcache") && strings.Contains(s, "--folder "+store)
		}), "hooks %q: want the store's loader cache folder", hooks)
		writeSpec(t, spec)
	}
}
