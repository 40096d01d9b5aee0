package fakehost

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-nvc/nvc/devices"
	"github.com/go-nvc/nvc/internal/fakenvml"
	"github.com/go-nvc/nvc/internal/testutil"
)

// gpuHost writes only the GPU trees of a host into a temp dir.
func gpuHost(t *testing.T, o Options) *Host {
	t.Helper()
	o = withDefaults(&o)
	h, err := newHost(t.TempDir(), o)
	require.NoError(t, err, "newHost")
	require.NoError(t, writeGPUs(h, o), "writeGPUs")
	return h
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return string(b)
}

func TestGPUInformation(t *testing.T) {
	t.Parallel()
	h := gpuHost(t, Options{Machine: "dgxh100"})
	got := readFile(t, filepath.Join(h.ProcRoot, "driver/nvidia/gpus/0000:43:00.0/information"))
	want := "Model: \t\t NVIDIA H100 80GB HBM3\n" +
		"IRQ:   \t\t 181\n" +
		"GPU UUID: \t " + fakenvml.GPUUUID("dgxh100", 1) + "\n" +
		"Video BIOS: \t 96.00.89.00.01\n" +
		"Bus Type: \t PCIe\n" +
		"DMA Size: \t 47 bits\n" +
		"DMA Mask: \t 0x7fffffffffff\n" +
		"Bus Location: \t 0000:43:00.0\n" +
		"Device Minor: \t 1\n" +
		"GPU Firmware: \t 550.54.15\n" +
		"GPU Excluded:\t No\n"
	assert.Equal(t, want, got, "information")
	ents, _ := os.ReadDir(filepath.Join(h.ProcRoot, "driver/nvidia/gpus"))
	assert.Len(t, ents, 8, "GPU dirs")
	v := readFile(t, filepath.Join(h.ProcRoot, "driver/nvidia/version"))
	assert.True(t, strings.HasPrefix(v, "NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.15  "), "version file %q", v)
	assert.Contains(t, v, "\nGCC version:  gcc version", "version file")
	p := readFile(t, filepath.Join(h.ProcRoot, "driver/nvidia/params"))
	for _, kv := range []string{"ModifyDeviceFiles: 1\n", "DeviceFileUID: 0\n", "DeviceFileGID: 0\n", "DeviceFileMode: 438\n"} {
		assert.Contains(t, p, kv, "params lacks %q", kv)
	}
}

// TestMIGMinors checks the minor table against values published from real
// hosts (k8s-dra-driver-gpu quotes gpu3/gi3/ci3 439 and gpu6/gi11/ci7 920).
func TestMIGMinors(t *testing.T) {
	t.Parallel()
	h := gpuHost(t, Options{})
	lines := strings.Split(strings.TrimSuffix(readFile(t, filepath.Join(h.ProcRoot, "driver/nvidia-caps/mig-minors")), "\n"), "\n")
	require.Len(t, lines, 2+32*15*9, "mig-minors lines")
	for i, want := range map[int]string{0: "config 1", 1: "monitor 2", 2: "gpu0/gi0/access 3", 3: "gpu0/gi0/ci0/access 4", 136: "gpu0/gi14/ci7/access 137", 137: "gpu1/gi0/access 138"} {
		assert.Equal(t, want, lines[i], "line %d", i)
	}
	all := strings.Join(lines, "\n") + "\n"
	for _, want := range []string{"\ngpu3/gi3/ci3/access 439\n", "\ngpu6/gi11/ci7/access 920\n", "\ngpu31/gi14/ci7/access 4322\n"} {
		assert.Contains(t, all, want, "mig-minors lacks %q", want)
	}
}

func TestMIGCapsAndNodes(t *testing.T) {
	t.Parallel()
	h := gpuHost(t, Options{MIG: map[int][]string{1: {"1g.5gb", "3g.20gb"}}})
	// GPU 1 (minor 1): GI 7 (1g) and GI 2 (3g), one CI 0 each.
	for path, want := range map[string]string{
		"driver/nvidia/capabilities/gpu1/mig/gi7/access":     "DeviceFileMinor: 201\nDeviceFileMode: 292\nDeviceFileModify: 1\n",
		"driver/nvidia/capabilities/gpu1/mig/gi7/ci0/access": "DeviceFileMinor: 202\nDeviceFileMode: 292\nDeviceFileModify: 1\n",
		"driver/nvidia/capabilities/gpu1/mig/gi2/ci0/access": "DeviceFileMinor: 157\nDeviceFileMode: 292\nDeviceFileModify: 1\n",
		"driver/nvidia/capabilities/mig/config":              "DeviceFileMinor: 1\nDeviceFileMode: 256\nDeviceFileModify: 1\n",
		"driver/nvidia/capabilities/mig/monitor":             "DeviceFileMinor: 2\nDeviceFileMode: 292\nDeviceFileModify: 1\n",
	} {
		assert.Equal(t, want, readFile(t, filepath.Join(h.ProcRoot, path)), path)
	}
	gis, _ := filepath.Glob(filepath.Join(h.ProcRoot, "driver/nvidia/capabilities/gpu*/mig/gi*"))
	assert.Len(t, gis, 2, "GI dirs, want gpu1's two")
	_, err := os.Stat(filepath.Join(h.ProcRoot, "driver/nvidia/capabilities/gpu0/mig"))
	assert.NoError(t, err, "MIG-capable GPU 0 has no caps dir")
	// Without RealNodes the nodes are marker files.
	for node, want := range map[string]string{"nvidia-caps/nvidia-cap201": "char 511:201\n", "nvidia7": "char 195:7\n", "nvidia-caps-imex-channels/channel0": "char 234:0\n"} {
		assert.Equal(t, want, readFile(t, filepath.Join(h.DevRoot, node)), node)
	}
}

func TestRealNodes(t *testing.T) {
	testutil.RequireRoot(t)
	t.Parallel()
	h := gpuHost(t, Options{RealNodes: true, IMEXChannels: 3, MIG: map[int][]string{0: {"7g.40gb"}}})
	for node, want := range map[string][3]uint32{
		"nvidia0": {195, 0, 0o666}, "nvidia7": {195, 7, 0o666}, "nvidiactl": {195, 255, 0o666},
		"nvidia-modeset": {195, 254, 0o666}, "nvidia-uvm": {510, 0, 0o666}, "nvidia-uvm-tools": {510, 1, 0o666},
		"nvidia-caps/nvidia-cap1": {511, 1, 0o400}, "nvidia-caps/nvidia-cap2": {511, 2, 0o444},
		"nvidia-caps/nvidia-cap3": {511, 3, 0o444}, "nvidia-caps/nvidia-cap4": {511, 4, 0o444},
		"nvidia-caps-imex-channels/channel2": {234, 2, 0o666},
	} {
		t.Run(node, func(t *testing.T) {
			var st unix.Stat_t
			require.NoError(t, unix.Lstat(filepath.Join(h.DevRoot, node), &st), node)
			got := [3]uint32{unix.Major(st.Rdev), unix.Minor(st.Rdev), st.Mode & 0o7777}
			assert.Equal(t, uint32(unix.S_IFCHR), st.Mode&unix.S_IFMT, "%s: mode %o, want char", node, st.Mode)
			assert.Equal(t, want, got, "%s: major, minor, permissions", node)
		})
	}
	_, err := os.Lstat(filepath.Join(h.DevRoot, "nvidia-caps-imex-channels/channel3"))
	assert.ErrorIs(t, err, fs.ErrNotExist, "channel3 exists; want 3 channels")
}

func TestNoIMEXChannels(t *testing.T) {
	h := gpuHost(t, Options{IMEXChannels: -1})
	_, err := os.Lstat(filepath.Join(h.DevRoot, "nvidia-caps-imex-channels"))
	assert.ErrorIs(t, err, fs.ErrNotExist, "IMEX channel dir exists")
}

func TestUnwiredMockRefused(t *testing.T) {
	// go-nvml's own server puts every GPU at bus 0 (GetPciInfo fills only
	// the device id), so its trees would collide.
	h := &Host{Root: t.TempDir(), NVML: busZeroNVML{dgxa100(t)}, DriverVersion: DefaultDriverVersion}
	err := writeGPUs(h, withDefaults(nil))
	require.ErrorContains(t, err, "share PCI bus id 0000:00:00.0")
}

// busZeroNVML puts every GPU at PCI bus 0, as go-nvml's unwired mocks do.
type busZeroNVML struct{ devices.NVMLInterface }

func (n busZeroNVML) DeviceByIndex(i int) (devices.NVMLDevice, error) {
	d, err := n.NVMLInterface.DeviceByIndex(i)
	return busZeroDevice{d}, err
}

type busZeroDevice struct{ devices.NVMLDevice }

func (busZeroDevice) PCIInfo() (devices.PCIAddress, error) { return devices.PCIAddress{}, nil }
