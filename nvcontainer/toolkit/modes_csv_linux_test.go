package toolkit_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/opencontainers/runtime-spec/specs-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-nvc/nvc/internal/fakehost"
	"github.com/go-nvc/nvc/internal/testutil"
	"github.com/go-nvc/nvc/nvcontainer/request"
	"github.com/go-nvc/nvc/nvcontainer/toolkit"
	"github.com/go-nvc/nvc/tegra"
)

// csvConfig is a config in mode m for the simulated Jetson h.
func csvConfig(h *fakehost.TegraHost, m string) *toolkit.Config {
	return withMode(m, func(c *toolkit.Config) {
		c.CLI.Root = h.Root
		c.Runtime.Modes.CSV.MountSpecPath = h.SpecDir
	})
}

// TestResolveModeCSV: csv is a mode; its devices are runtime.nvidia.com/gpu
// names; auto is csv on a Tegra host (no /proc/driver/nvidia here) unless
// only CDI names are asked for, and legacy elsewhere.
func TestResolveModeCSV(t *testing.T) {
	h, err := fakehost.GenerateTegra(t.TempDir(), nil)
	require.NoError(t, err)
	if _, err := os.Stat("/proc/driver/nvidia"); err == nil {
		t.Skip("this host has an NVIDIA driver: auto is not csv") // not in CI: no GPU there
	}
	tests := []struct {
		name, mode string
		env        []string
		wantMode   string
		want       []string
	}{
		{"csv all", "csv", []string{"NVIDIA_VISIBLE_DEVICES=all"}, toolkit.ModeCSV, []string{"runtime.nvidia.com/gpu=all"}},
		{"csv 0", "csv", []string{"NVIDIA_VISIBLE_DEVICES=0"}, toolkit.ModeCSV, []string{"runtime.nvidia.com/gpu=0"}},
		{"csv none asked", "csv", nil, toolkit.ModeCSV, nil},
		{"auto on Tegra", "auto", []string{"NVIDIA_VISIBLE_DEVICES=all"}, toolkit.ModeCSV, []string{"runtime.nvidia.com/gpu=all"}},
		{"auto CDI names on Tegra", "auto", []string{"NVIDIA_VISIBLE_DEVICES=nvidia.com/gpu=0"}, toolkit.ModeCDI, []string{"nvidia.com/gpu=0"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := toolkit.ResolveMode(modeSpec(nil, tt.env...), csvConfig(h, tt.mode))
			require.NoError(t, err)
			assert.Equal(t, tt.wantMode, d.Mode)
			assert.Equal(t, tt.want, d.Devices)
		})
	}
	d, err := toolkit.ResolveMode(modeSpec(nil, "NVIDIA_VISIBLE_DEVICES=all"), withMode("auto", func(c *toolkit.Config) { c.CLI.Root = t.TempDir() }))
	require.NoError(t, err)
	assert.Equal(t, toolkit.ModeLegacy, d.Mode, "auto on a host that is not Tegra")
	m, err := csvConfig(h, "csv").RuntimeMode()
	require.NoError(t, err)
	assert.Equal(t, toolkit.ModeCSV, m)

	for _, mode := range []string{"csv", "auto"} {
		why, err := toolkit.HookSkips(csvConfig(h, mode))
		require.NoError(t, err)
		assert.NotEmpty(t, why, "the hook in %s mode on a Tegra host", mode)
	}
	why, err := toolkit.HookSkips(withMode("auto", func(c *toolkit.Config) { c.CLI.Root = t.TempDir() }))
	require.NoError(t, err)
	assert.Empty(t, why, "the hook in auto mode elsewhere")
}

// TestCSVFiles: NVIDIA_REQUIRE_JETPACK=csv-mounts=all reads every file of
// mount-spec-path, anything else the base files only.
func TestCSVFiles(t *testing.T) {
	h, err := fakehost.GenerateTegra(t.TempDir(), nil)
	require.NoError(t, err)
	for _, tt := range []struct {
		jetpack string
		want    []string
	}{
		{"", []string{"devices.csv", "drivers.csv"}},
		{tegra.MountsBaseOnly, []string{"devices.csv", "drivers.csv"}},
		{"csv-mounts=ALL", []string{"devices.csv", "drivers.csv"}},
		{tegra.MountsAll, []string{"devices.csv", "drivers.csv", "tensorrt.csv"}},
	} {
		t.Run(tt.jetpack, func(t *testing.T) {
			req, err := request.FromEnv([]string{"NVIDIA_VISIBLE_DEVICES=all", "NVIDIA_REQUIRE_JETPACK=" + tt.jetpack})
			require.NoError(t, err)
			files, err := toolkit.CSVFiles(csvConfig(h, "csv"), req)
			require.NoError(t, err)
			var got []string
			for _, f := range files {
				got = append(got, filepath.Base(f))
			}
			assert.Equal(t, tt.want, got)
		})
	}
}

// TestApplyModeCSV: csv mode injects the spec made from the mount specs:
// the nodes with their cgroup rules, the library and dir mounts, the
// link and loader cache hooks; the request is voided. With a spec dir
// that holds no file, an error.
func TestApplyModeCSV(t *testing.T) {
	testutil.RequireRoot(t) // real nodes
	h, err := fakehost.GenerateTegra(t.TempDir(), &fakehost.TegraOptions{RealNodes: true})
	require.NoError(t, err)
	cfg := csvConfig(h, "csv")
	spec := modeSpec(nil, "NVIDIA_VISIBLE_DEVICES=all", "NVIDIA_REQUIRE_JETPACK=csv-mounts=all")
	d, err := toolkit.ResolveMode(spec, cfg)
	require.NoError(t, err)
	changed, err := toolkit.ApplyMode(context.Background(), spec, cfg, d, &toolkit.JitOptions{HookPath: "/usr/bin/nvidia-cdi-hook"})
	require.NoError(t, err)
	require.True(t, changed)

	var nodes []string
	for _, n := range spec.Linux.Devices {
		nodes = append(nodes, n.Path)
	}
	assert.Contains(t, nodes, "/dev/nvmap")
	assert.Contains(t, nodes, "/dev/nvgpu/igpu0/ctrl")
	major := int64(fakehost.MajorNvgpu)
	assert.True(t, slices.ContainsFunc(spec.Linux.Resources.Devices, func(r specs.LinuxDeviceCgroup) bool {
		return r.Allow && r.Major != nil && *r.Major == major
	}), "no cgroup rule for the nvgpu nodes: %+v", spec.Linux.Resources.Devices)
	var mounts []string
	for _, m := range spec.Mounts {
		mounts = append(mounts, m.Destination)
	}
	assert.Contains(t, mounts, fakehost.TegraLibDir+"/libcuda.so.1.1")
	assert.Contains(t, mounts, "/usr/lib/aarch64-linux-gnu/tegra-egl")
	assert.Contains(t, mounts, "/usr/lib/aarch64-linux-gnu/libnvinfer.so.8.6.2", "csv-mounts=all")
	assert.Contains(t, mounts, tegra.ReleaseFile)
	var args []string
	for _, hk := range spec.Hooks.CreateContainer {
		args = append(args, strings.Join(hk.Args, " "))
	}
	hooks := strings.Join(args, "\n")
	assert.Contains(t, hooks, "create-symlinks --link ")
	assert.Contains(t, hooks, " --link tegra/libcuda.so::/usr/lib/aarch64-linux-gnu/libcuda.so ")
	assert.Contains(t, hooks, "update-ldcache --folder "+fakehost.TegraLibDir)
	assert.Contains(t, spec.Process.Env, "NVIDIA_VISIBLE_DEVICES=void")

	empty := csvConfig(h, "csv")
	empty.Runtime.Modes.CSV.MountSpecPath = t.TempDir()
	spec = modeSpec(nil, "NVIDIA_VISIBLE_DEVICES=all")
	d, err = toolkit.ResolveMode(spec, empty)
	require.NoError(t, err)
	_, err = toolkit.ApplyMode(context.Background(), spec, empty, d, nil)
	require.ErrorIs(t, err, tegra.ErrNotTegra)

	spec = modeSpec(nil, "NVIDIA_VISIBLE_DEVICES=1")
	d, err = toolkit.ResolveMode(spec, cfg)
	require.NoError(t, err)
	_, err = toolkit.ApplyMode(context.Background(), spec, cfg, d, nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "unknown device")
}
