package nvcontainer_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/go-nvc/nvc/capabilities"
	"github.com/go-nvc/nvc/devices"
	"github.com/go-nvc/nvc/driver"
	"github.com/go-nvc/nvc/internal/fakehost"
	"github.com/go-nvc/nvc/nvcontainer"
)

// listed runs List and fails on error.
func listed(t *testing.T, h *testHost, o *nvcontainer.ListOptions) []string {
	t.Helper()
	out, err := nvcontainer.List(h.host, o)
	if err != nil {
		t.Fatal(err)
	}
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
	if !slices.Equal(out[:len(want)], want) {
		t.Fatalf("device lines = %q, want %q", out[:len(want)], want)
	}
	files, err := h.host.Driver.Files(capabilities.All)
	if err != nil {
		t.Fatal(err)
	}
	var rest []string
	for _, group := range [][]driver.File{files.Binaries, files.Libraries, files.Libraries32, files.IPCs, files.Firmware} {
		for _, f := range group {
			rest = append(rest, f.Path)
		}
	}
	if !slices.Equal(out[len(want):], rest) {
		t.Errorf("file lines = %q\nwant binaries, libraries, 32-bit libraries, IPCs, firmware: %q", out[len(want):], rest)
	}
	checkListedExist(t, h.fake, out)
	if slices.ContainsFunc(out, func(p string) bool { return strings.Contains(p, "/capabilities/") }) {
		t.Errorf("bare list printed MIG capabilities: %q", out)
	}
}

// checkListedExist checks that every listed path is a file of the
// simulated host: nodes and procfs under its roots, driver files under its
// driver root.
func checkListedExist(t *testing.T, fh *fakehost.Host, out []string) {
	t.Helper()
	if len(out) != len(slices.Compact(slices.Clone(out))) {
		t.Errorf("duplicate lines in %q", out)
	}
	for _, p := range out {
		if _, err := os.Lstat(filepath.Join(fh.Root, p)); err != nil {
			t.Errorf("listed %s, missing on the simulated host: %v", p, err)
		}
	}
}

func TestListOptions(t *testing.T) {
	h := newTestHost(t, nil)
	tests := []struct {
		name string
		opts nvcontainer.ListOptions
		want func(out []string) string // "" when out is right
	}{
		{"no device no files", nvcontainer.ListOptions{}, func(out []string) string {
			return expect(len(out) == 0, "want nothing")
		}},
		{"one device", nvcontainer.ListOptions{Devices: []string{"1"}}, func(out []string) string {
			return expect(slices.Equal(out, []string{"/dev/nvidiactl", "/dev/nvidia-uvm", "/dev/nvidia-uvm-tools", "/dev/nvidia-modeset", "/dev/nvidia1"}),
				"want the control nodes and /dev/nvidia1")
		}},
		{"empty device", nvcontainer.ListOptions{Devices: []string{""}}, func(out []string) string {
			return expect(len(out) == 4 && out[0] == "/dev/nvidiactl", "want the control nodes only")
		}},
		{"libraries without compat32", nvcontainer.ListOptions{Libraries: true}, func(out []string) string {
			return expect(len(out) > 0 && !slices.ContainsFunc(out, func(p string) bool { return strings.Contains(p, "i386") }) &&
				!slices.ContainsFunc(out, func(p string) bool { return strings.HasPrefix(p, "/dev") }), "want native libraries only")
		}},
		{"firmware", nvcontainer.ListOptions{Firmware: true}, func(out []string) string {
			return expect(len(out) > 0 && strings.HasPrefix(out[0], "/lib/firmware/nvidia/"+fakehost.DefaultDriverVersion+"/"), "want firmware paths")
		}},
		{"imex channels", nvcontainer.ListOptions{IMEXChannels: []uint32{3, 0}}, func(out []string) string {
			return expect(slices.Equal(out, []string{"/dev/nvidia-caps-imex-channels/channel3", "/dev/nvidia-caps-imex-channels/channel0"}),
				"want both channel nodes, missing or not")
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out := listed(t, h, &tc.opts)
			if msg := tc.want(out); msg != "" {
				t.Errorf("List = %q: %s", out, msg)
			}
		})
	}
}

func expect(ok bool, msg string) string {
	if ok {
		return ""
	}
	return msg
}

func TestListErrors(t *testing.T) {
	h := newTestHost(t, nil)
	tests := []struct {
		opts  nvcontainer.ListOptions
		stage nvcontainer.Stage
		text  string
	}{
		{nvcontainer.ListOptions{Devices: []string{"0,9"}}, nvcontainer.StageDevice, "device error: 9: unknown device"},
		{nvcontainer.ListOptions{Devices: []string{"none"}}, nvcontainer.StageDevice, "device error: none: unknown device"},
		{nvcontainer.ListOptions{MIGConfig: []string{"0"}}, nvcontainer.StageMIGConfig, "mig-config error: 0: only 'all' devices are currently supported"},
		{nvcontainer.ListOptions{MIGMonitor: []string{"gpu0"}}, nvcontainer.StageMIGMonitor, "mig-monitor error: gpu0: only 'all' devices are currently supported"},
	}
	for _, tc := range tests {
		_, err := nvcontainer.List(h.host, &tc.opts)
		var pe *nvcontainer.PlanError
		if !errors.As(err, &pe) || pe.Stage != tc.stage || err.Error() != tc.text {
			t.Errorf("List(%+v) error = %v, want %s stage: %q", tc.opts, err, tc.stage, tc.text)
		}
	}
	if _, err := nvcontainer.List(nil, nil); err == nil {
		t.Error("List(nil host) succeeded")
	}
}

func TestListMIG(t *testing.T) {
	h := newTestHost(t, &fakehost.Options{MIG: map[int][]string{1: {"3g.20gb", "1g.5gb"}}})
	gpu1 := h.host.Devices.GPUs[1]
	if len(gpu1.MIGDevices) != 2 || h.host.Devices.NVCapsStyle != devices.NVCapsDev {
		t.Fatalf("fixture: GPU 1 has %d MIG devices, caps style %s", len(gpu1.MIGDevices), h.host.Devices.NVCapsStyle)
	}
	m := gpu1.MIGDevices[1]
	out := listed(t, h, &nvcontainer.ListOptions{Devices: []string{"1:1"}})
	want := []string{"/dev/nvidiactl", "/dev/nvidia-uvm", "/dev/nvidia-uvm-tools", "/dev/nvidia-modeset", "/dev/nvidia1",
		m.GIAccess.Proc, m.CIAccess.Proc, m.GIAccess.Node.Path, m.CIAccess.Node.Path}
	if !slices.Equal(out, want) {
		t.Errorf("list -d 1:1 = %q\nwant %q", out, want)
	}
	checkListedExist(t, h.fake, out)

	// mig-config=all: the global capability, then every MIG-capable GPU's
	// capabilities dir and (device-node style) the nodes of all its minors.
	out = listed(t, h, &nvcontainer.ListOptions{Devices: []string{"all"}, MIGConfig: []string{"all"}})
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
	if i != 12 || !slices.Equal(out[i:], want) {
		t.Errorf("list -d all --mig-config=all: global capability at line %d, %d lines after it; want line 12 and the %d lines %q...",
			i, len(out)-i, len(want), want[:6])
	}
	if !slices.Contains(want, "/proc/driver/nvidia/capabilities/gpu1") {
		t.Errorf("GPU 1 (MIG enabled) not granted: %q", want[:6])
	}
	if slices.Contains(out, m.GIAccess.Proc) {
		t.Errorf("mig-config all still lists MIG access files: %q", out)
	}
	if _, err := nvcontainer.List(h.host, &nvcontainer.ListOptions{Devices: []string{"1:0"}, MIGMonitor: []string{"all"}}); err == nil ||
		!strings.Contains(err.Error(), "mig-monitor error") {
		t.Errorf("mig-monitor all with a specific MIG device: %v, want a mig-monitor error", err)
	}
}

func TestOpenHost(t *testing.T) {
	fh, err := fakehost.Generate(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	d := &driver.Options{Root: fh.Root, ProcRoot: fh.ProcRoot, DevRoot: fh.DevRoot}
	// Auto loads the simulated host's libnvidia-ml.so.1, which is no NVML:
	// discovery falls back to procfs and says why.
	h, err := nvcontainer.OpenHost(context.Background(), d, "")
	if err != nil {
		t.Fatal(err)
	}
	if h.Devices.Backend != devices.Procfs || h.Devices.NVMLError == "" || len(h.Devices.GPUs) != 8 {
		t.Errorf("auto on a host without NVML: backend %s (%q), %d GPUs; want procfs with a reason, 8 GPUs",
			h.Devices.Backend, h.Devices.NVMLError, len(h.Devices.GPUs))
	}
	if v := h.Driver.Version(); v.NVRM != fh.DriverVersion || v.Source != driver.FromProcfs {
		t.Errorf("driver version %+v, want %s from procfs", v, fh.DriverVersion)
	}
	d.NVML = fh.NVML
	if h, err = nvcontainer.OpenHost(context.Background(), d, devices.NVML); err != nil {
		t.Fatal(err)
	}
	if h.Devices.Backend != devices.NVML || h.Devices.CUDAVersion != fh.CUDAVersion || h.Driver.Version().CUDA != fh.CUDAVersion {
		t.Errorf("with NVML: backend %s, CUDA %q/%q; want nvml, %s", h.Devices.Backend, h.Devices.CUDAVersion, h.Driver.Version().CUDA, fh.CUDAVersion)
	}
	if _, err := nvcontainer.OpenHost(context.Background(), &driver.Options{Root: fh.Root, ProcRoot: t.TempDir()}, devices.Procfs); err == nil {
		t.Error("OpenHost on an empty procfs succeeded")
	}
}

// TestListMIGGolden pins list --device=all --mig-config=all
// --mig-monitor=all on a host with GPU 1 in MIG mode and proc-style
// capabilities (no nvidia-caps major: no capability nodes to list), byte
// for byte (testdata/list-mig.golden; rewrite with -update): per
// MIG-capable GPU, libnvidia-container prints its mig_caps_path,
// /proc/driver/nvidia/capabilities/gpuN, not the gpuN/mig below it.
func TestListMIGGolden(t *testing.T) {
	fh, err := fakehost.Generate(t.TempDir(), &fakehost.Options{MIG: map[int][]string{1: {"3g.20gb", "1g.5gb"}}})
	if err != nil {
		t.Fatal(err)
	}
	devs := filepath.Join(fh.ProcRoot, "devices")
	b, err := os.ReadFile(devs)
	if err != nil {
		t.Fatal(err)
	}
	b = regexp.MustCompile(`(?m)^\d+ nvidia-caps\n`).ReplaceAll(b, nil)
	if err := os.WriteFile(devs, b, 0o644); err != nil {
		t.Fatal(err)
	}
	h := openTestHost(t, fh, devices.NVML)
	if h.host.Devices.NVCapsStyle != devices.NVCapsProc {
		t.Fatalf("fixture: caps style %s, want proc", h.host.Devices.NVCapsStyle)
	}
	out := listed(t, h, &nvcontainer.ListOptions{Devices: []string{"all"}, MIGConfig: []string{"all"}, MIGMonitor: []string{"all"}})
	got := strings.Join(out, "\n") + "\n"
	file := filepath.Join("testdata", "list-mig.golden")
	if *update {
		if err := os.WriteFile(file, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Errorf("list output differs from %s (-update to accept):\ngot:\n%s\nwant:\n%s", file, got, want)
	}
	for i := range 8 {
		if dir := fmt.Sprintf("/proc/driver/nvidia/capabilities/gpu%d", i); !slices.Contains(out, dir) {
			t.Errorf("GPU %d's capabilities dir %s not listed", i, dir)
		}
	}
	for _, p := range out {
		if _, err := os.Lstat(filepath.Join(fh.Root, p)); err != nil {
			t.Errorf("listed %s, missing on the simulated host: %v", p, err)
		}
		if strings.HasSuffix(p, "/mig") {
			t.Errorf("listed %s, a gpuN/mig dir", p)
		}
	}
}
