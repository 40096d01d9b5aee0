package nvcontainer_test

import (
	"context"
	"path"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-nvc/nvc/capabilities"
	"github.com/go-nvc/nvc/devices"
	"github.com/go-nvc/nvc/driver"
	"github.com/go-nvc/nvc/internal/fakehost"
	"github.com/go-nvc/nvc/nvcontainer"
)

// wslTestHost generates a simulated WSL2 host and opens it as a runtime
// does (devices.Auto: no NVML is there).
func wslTestHost(t *testing.T) *testHost {
	t.Helper()
	fh, err := fakehost.GenerateWSL(t.TempDir(), nil)
	require.NoError(t, err)
	host, err := nvcontainer.OpenHost(context.Background(), &driver.Options{Roots: driver.Roots{Driver: fh.Root, Proc: fh.ProcRoot, Dev: fh.DevRoot}}, devices.Auto)
	require.NoError(t, err)
	return &testHost{fake: fh, host: host}
}

// TestPlanWSL: on a WSL2 host, whatever the capabilities, the plan binds
// /dev/dxg and allows it, binds every driver store file at its own path,
// links libcuda.so.1 to libcuda.so.1.1 in the store and nvidia-smi into
// /usr/bin (instead of binding it there), adds the store to the loader
// cache dirs, binds libdxcore.so into the library dir, and masks no
// /proc/driver/nvidia (WSL has none).
func TestPlanWSL(t *testing.T) {
	h := wslTestHost(t)
	store := fakehost.WSLStoreDir
	for _, caps := range []capabilities.Set{capabilities.Of(capabilities.Utility), capabilities.Of(capabilities.Compute, capabilities.Utility), capabilities.All} {
		t.Run(caps.String(), func(t *testing.T) {
			p := h.plan(t, capsRequest(caps), debianRootfs, nil)
			dxg, ok := findMount(p, devices.DevDXG)
			if assert.True(t, ok, "no /dev/dxg mount") {
				assert.Equal(t, nvcontainer.MountDevice, dxg.Kind)
				assert.Equal(t, h.fake.DevRoot+"/dxg", dxg.Source)
				assert.True(t, hasRule(p, dxg.Device.Major, dxg.Device.Minor), "no cgroup rule for /dev/dxg")
			}
			for _, n := range []string{"libcuda.so.1.1", "libcuda_loader.so", "libnvidia-ptxjitcompiler.so.1", "libnvidia-ml.so.1",
				"libnvidia-ml_loader.so", "libnvdxgdmal.so.1", "nvcubins.bin", "nvidia-smi", "libnvidia-encode.so.1", "nvapi64.dll"} {
				m, ok := findMount(p, path.Join(store, n))
				if assert.True(t, ok, "driver store file %s not bound at its own path", n) {
					assert.Equal(t, nvcontainer.MountDriverStore, m.Kind, "%s: kind", n)
					assert.Equal(t, h.fake.Root+path.Join(store, n), m.Source, "%s: source", n)
					assert.Equal(t, []string{"ro", "nosuid", "nodev"}, m.Options, "%s: options", n)
				}
			}
			target, ok := findLink(p, path.Join(store, "libcuda.so.1"))
			assert.True(t, ok && target == "libcuda.so.1.1", "store libcuda.so.1 → %q, want libcuda.so.1.1", target)
			target, ok = findLink(p, "/usr/bin/nvidia-smi")
			assert.True(t, ok && target == path.Join(store, "nvidia-smi"), "/usr/bin/nvidia-smi → %q, want the store's", target)
			_, bound := findMount(p, "/usr/bin/nvidia-smi")
			assert.False(t, bound, "/usr/bin/nvidia-smi bound as well as linked")
			assert.Contains(t, p.LDCache.Dirs, store, "loader cache dirs")
			_, ok = findMount(p, "/usr/lib/x86_64-linux-gnu/libdxcore.so")
			assert.True(t, ok, "libdxcore.so not bound into the library dir")
			assert.Empty(t, p.Tmpfs, "tmpfs on WSL (no /proc/driver/nvidia)")
			assert.Empty(t, p.GPUs, "GPUs listed one by one on WSL")
		})
	}
}

// TestPlanWSLNoDevbind: --no-devbind leaves /dev/dxg out of the mounts
// and keeps its cgroup rule; --no-cgroups the other way round.
func TestPlanWSLNoDevbind(t *testing.T) {
	h := wslTestHost(t)
	p := h.plan(t, capsRequest(capabilities.All), debianRootfs, &nvcontainer.PlanOptions{NoDevbind: true})
	_, ok := findMount(p, devices.DevDXG)
	assert.False(t, ok, "/dev/dxg bound with NoDevbind")
	assert.Len(t, p.CgroupRules, 1, "cgroup rules with NoDevbind")
	p = h.plan(t, capsRequest(capabilities.All), debianRootfs, &nvcontainer.PlanOptions{NoCgroups: true})
	_, ok = findMount(p, devices.DevDXG)
	assert.True(t, ok, "/dev/dxg not bound with NoCgroups")
	assert.Empty(t, p.CgroupRules, "cgroup rules with NoCgroups")
}

// TestPrepareHostWSL: --load-kmods on a WSL2 host loads and makes
// nothing (no modprobe, no /dev/nvidia* nodes), saying why, and opens the
// host.
func TestPrepareHostWSL(t *testing.T) {
	fh, err := fakehost.GenerateWSL(t.TempDir(), nil)
	require.NoError(t, err)
	roots := driver.Roots{Driver: fh.Root, Proc: fh.ProcRoot, Dev: fh.DevRoot}
	h, rep, err := nvcontainer.PrepareHost(context.Background(), &nvcontainer.HostOptions{Driver: &driver.Options{Roots: roots}, LoadModules: true})
	require.NoError(t, err)
	require.NotNil(t, rep)
	assert.Contains(t, rep.Skipped, "WSL2")
	assert.Empty(t, rep.Created)
	assert.NoFileExists(t, filepath.Join(fh.DevRoot, "nvidiactl"))
	assert.Equal(t, devices.WSL, h.Devices.Backend)
}
