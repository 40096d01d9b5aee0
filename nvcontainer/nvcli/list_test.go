package nvcli_test

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-nvc/nvc/capabilities"
	"github.com/go-nvc/nvc/devices"
	"github.com/go-nvc/nvc/driver"
	"github.com/go-nvc/nvc/internal/fakehost"
	"github.com/go-nvc/nvc/nvcontainer"
	"github.com/go-nvc/nvc/nvcontainer/nvcli"
)

// listed runs List and fails on error.
func listed(t *testing.T, h *testHost, o *nvcli.ListOptions) []string {
	t.Helper()
	out, err := nvcli.List(h.host, o)
	require.NoError(t, err)
	return out
}

func TestListDefault(t *testing.T) {
	h := newTestHost(t, nil)
	out := listed(t, h, nil)
	// Control nodes, then the 8 GPUs in index order, then files.
	want := []string{"/dev/nvidiactl", "/dev/nvidia-uvm", "/dev/nvidia-uvm-tools", "/dev/nvidia-modeset"}
	for i := range 8 {
		want = append(want, fmt.Sprintf("/dev/nvidia%d", i))
	}
	require.GreaterOrEqual(t, len(out), len(want))
	require.Equal(t, want, out[:len(want)], "device lines")
	files, err := h.host.Driver.Files(capabilities.All)
	require.NoError(t, err)
	var rest, egl []string
	for _, group := range [][]driver.File{files.Binaries, files.Libraries, files.Libraries32, files.IPCs, files.Firmware} {
		for _, f := range group {
			if strings.HasPrefix(f.Name, "libnvidia-egl-") {
				egl = append(egl, f.Path)
				continue
			}
			rest = append(rest, f.Path)
		}
	}
	assert.Equal(t, rest, out[len(want):], "file lines: want binaries, libraries, 32-bit libraries, IPCs, firmware")
	// The EGL platform libraries are the toolkit's (CDI), not on
	// libnvidia-container's lists: list never prints them.
	require.NotEmpty(t, egl, "the simulated host has no EGL platform library")
	for _, p := range egl {
		assert.NotContains(t, out, p, "list prints an EGL platform library")
	}
	checkListedExist(t, h.fake, out)
	assert.False(t, slices.ContainsFunc(out, func(p string) bool { return strings.Contains(p, "/capabilities/") }),
		"bare list printed MIG capabilities: %q", out)
}

// checkListedExist checks that every listed path is a file of the
// simulated host: nodes and procfs under its roots, driver files under its
// driver root.
func checkListedExist(t *testing.T, fh *fakehost.Host, out []string) {
	t.Helper()
	assert.Len(t, slices.Compact(slices.Clone(out)), len(out), "duplicate lines in %q", out)
	for _, p := range out {
		_, err := os.Lstat(filepath.Join(fh.Root, p))
		assert.NoError(t, err, "listed %s, missing on the simulated host", p)
	}
}

func TestListOptions(t *testing.T) {
	h := newTestHost(t, nil)
	tests := []struct {
		name string
		opts nvcli.ListOptions
		want func(t *testing.T, out []string)
	}{
		{"no device no files", nvcli.ListOptions{}, func(t *testing.T, out []string) {
			assert.Empty(t, out, "want nothing")
		}},
		{"one device", nvcli.ListOptions{Devices: []string{"1"}}, func(t *testing.T, out []string) {
			assert.Equal(t, []string{"/dev/nvidiactl", "/dev/nvidia-uvm", "/dev/nvidia-uvm-tools", "/dev/nvidia-modeset", "/dev/nvidia1"}, out,
				"want the control nodes and /dev/nvidia1")
		}},
		{"empty device", nvcli.ListOptions{Devices: []string{""}}, func(t *testing.T, out []string) {
			if assert.Len(t, out, 4, "want the control nodes only") {
				assert.Equal(t, "/dev/nvidiactl", out[0], "want the control nodes only")
			}
		}},
		{"libraries without compat32", nvcli.ListOptions{Libraries: true}, func(t *testing.T, out []string) {
			assert.NotEmpty(t, out, "want native libraries")
			assert.False(t, slices.ContainsFunc(out, func(p string) bool { return strings.Contains(p, "i386") }), "want native libraries only: %q", out)
			assert.False(t, slices.ContainsFunc(out, func(p string) bool { return strings.HasPrefix(p, "/dev") }), "want libraries only: %q", out)
		}},
		{"firmware", nvcli.ListOptions{Firmware: true}, func(t *testing.T, out []string) {
			if assert.NotEmpty(t, out, "want firmware paths") {
				assert.True(t, strings.HasPrefix(out[0], "/lib/firmware/nvidia/"+fakehost.DefaultDriverVersion+"/"), "want firmware paths: %q", out)
			}
		}},
		{"imex channels", nvcli.ListOptions{IMEXChannels: []uint32{3, 0}}, func(t *testing.T, out []string) {
			assert.Equal(t, []string{"/dev/nvidia-caps-imex-channels/channel3", "/dev/nvidia-caps-imex-channels/channel0"}, out,
				"want both channel nodes, missing or not")
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.want(t, listed(t, h, &tc.opts))
		})
	}
}

func TestListErrors(t *testing.T) {
	h := newTestHost(t, nil)
	tests := []struct {
		opts  nvcli.ListOptions
		stage nvcontainer.Stage
		text  string
	}{
		{nvcli.ListOptions{Devices: []string{"0,9"}}, nvcontainer.StageDevice, "device error: 9: unknown device"},
		{nvcli.ListOptions{Devices: []string{"none"}}, nvcontainer.StageDevice, "device error: none: unknown device"},
		// A CDI name is libnvidia-container's unknown device: the toolkit
		// resolves CDI names in its runtime (cdi, jit-cdi), never through
		// nvidia-container-cli; only our hook maps them to IDs.
		{nvcli.ListOptions{Devices: []string{"nvidia.com/gpu=0"}}, nvcontainer.StageDevice, "device error: nvidia.com/gpu=0: unknown device"},
		{nvcli.ListOptions{MIGConfig: []string{"0"}}, nvcontainer.StageMIGConfig, "mig-config error: 0: only 'all' devices are currently supported"},
		{nvcli.ListOptions{MIGMonitor: []string{"gpu0"}}, nvcontainer.StageMIGMonitor, "mig-monitor error: gpu0: only 'all' devices are currently supported"},
	}
	for _, tc := range tests {
		t.Run(tc.text, func(t *testing.T) {
			_, err := nvcli.List(h.host, &tc.opts)
			var pe *nvcontainer.PlanError
			require.ErrorAs(t, err, &pe)
			assert.Equal(t, tc.stage, pe.Stage)
			assert.EqualError(t, err, tc.text)
		})
	}
	_, err := nvcli.List(nil, nil)
	assert.Error(t, err, "List(nil host)")
}

func TestListMIG(t *testing.T) {
	h := newTestHost(t, &fakehost.Options{MIG: map[int][]string{1: {"3g.20gb", "1g.5gb"}}})
	gpu1 := h.host.Devices.GPUs[1]
	require.Len(t, gpu1.MIGDevices, 2, "fixture: GPU 1's MIG devices")
	require.Equal(t, devices.NVCapsDev, h.host.Devices.NVCapsStyle, "fixture: caps style")
	m := gpu1.MIGDevices[1]
	out := listed(t, h, &nvcli.ListOptions{Devices: []string{"1:1"}})
	want := []string{"/dev/nvidiactl", "/dev/nvidia-uvm", "/dev/nvidia-uvm-tools", "/dev/nvidia-modeset", "/dev/nvidia1",
		m.GIAccess.Proc, m.CIAccess.Proc, m.GIAccess.Node.Path, m.CIAccess.Node.Path}
	assert.Equal(t, want, out, "list -d 1:1")
	checkListedExist(t, h.fake, out)

	// mig-config=all: the global capability, then every MIG-capable GPU's
	// capabilities dir and (device-node style) the nodes of all its minors.
	out = listed(t, h, &nvcli.ListOptions{Devices: []string{"all"}, MIGConfig: []string{"all"}})
	global := h.host.Devices.MIGConfig
	want = []string{global.Proc, global.Node.Path}
	for _, g := range h.host.Devices.GPUs {
		if !g.MIGCapable {
			continue
		}
		want = append(want, fmt.Sprintf("/proc/driver/nvidia/capabilities/gpu%d", g.Minor), devices.DevNvidiaCaps)
		for _, minor := range g.MIGMinors {
			want = append(want, fmt.Sprintf("/dev/nvidia-caps/nvidia-cap%d", minor))
		}
	}
	i := slices.Index(out, global.Proc)
	require.Equal(t, 12, i, "list -d all --mig-config=all: line of the global capability")
	assert.Equal(t, want, out[i:], "list -d all --mig-config=all: the lines from the global capability on")
	assert.Contains(t, want, "/proc/driver/nvidia/capabilities/gpu1", "GPU 1 (MIG enabled) not granted")
	assert.NotContains(t, out, m.GIAccess.Proc, "mig-config all still lists MIG access files")
	_, err := nvcli.List(h.host, &nvcli.ListOptions{Devices: []string{"1:0"}, MIGMonitor: []string{"all"}})
	assert.ErrorContains(t, err, "mig-monitor error", "mig-monitor all with a specific MIG device")
}

// TestListMIGGolden pins list --device=all --mig-config=all
// --mig-monitor=all on a host with GPU 1 in MIG mode and proc-style
// capabilities (no nvidia-caps major: no capability nodes to list), byte
// for byte (testdata/list-mig.golden; rewrite with -update): per
// MIG-capable GPU, libnvidia-container prints its mig_caps_path,
// /proc/driver/nvidia/capabilities/gpuN, not the gpuN/mig below it.
func TestListMIGGolden(t *testing.T) {
	fh, err := fakehost.Generate(t.TempDir(), &fakehost.Options{MIG: map[int][]string{1: {"3g.20gb", "1g.5gb"}}})
	require.NoError(t, err)
	devs := filepath.Join(fh.ProcRoot, "devices")
	b, err := os.ReadFile(devs)
	require.NoError(t, err)
	b = regexp.MustCompile(`(?m)^\d+ nvidia-caps\n`).ReplaceAll(b, nil)
	require.NoError(t, os.WriteFile(devs, b, 0o644))
	h := openTestHost(t, fh, devices.NVML)
	require.Equal(t, devices.NVCapsProc, h.host.Devices.NVCapsStyle, "fixture: caps style")
	out := listed(t, h, &nvcli.ListOptions{Devices: []string{"all"}, MIGConfig: []string{"all"}, MIGMonitor: []string{"all"}})
	got := strings.Join(out, "\n") + "\n"
	file := filepath.Join("testdata", "list-mig.golden")
	if *update {
		require.NoError(t, os.WriteFile(file, []byte(got), 0o644))
	}
	want, err := os.ReadFile(file)
	require.NoError(t, err)
	assert.Equal(t, string(want), got, "list output differs from %s (-update to accept)", file)
	for i := range 8 {
		assert.Contains(t, out, fmt.Sprintf("/proc/driver/nvidia/capabilities/gpu%d", i), "GPU %d's capabilities dir not listed", i)
	}
	for _, p := range out {
		_, err := os.Lstat(filepath.Join(fh.Root, p))
		assert.NoError(t, err, "listed %s, missing on the simulated host", p)
		assert.False(t, strings.HasSuffix(p, "/mig"), "listed %s, a gpuN/mig dir", p)
	}
}
