package devices_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-nvc/nvc/devices"
	"github.com/go-nvc/nvc/driver"
	"github.com/go-nvc/nvc/internal/fakehost"
	"github.com/go-nvc/nvc/internal/fakenvml"
)

// Each board: GPU 1 is in MIG mode with a half and a single-slice instance,
// the other GPUs are not.
var boards = map[string]struct {
	mig        []string
	buses      string
	arch, cc   string
	firstModel string
}{
	"dgxa100": {[]string{"3g.20gb", "1g.5gb"}, "07 0f 47 4e 87 90 b7 bd", "Ampere", "8.0", "Mock NVIDIA A100-SXM4-40GB"},
	"dgxh100": {[]string{"3g.40gb", "1g.10gb"}, "1b 43 52 61 9d c3 d1 df", "Hopper", "9.0", "NVIDIA H100 80GB HBM3"},
	"dgxh200": {[]string{"3g.71gb", "1g.18gb"}, "1b 43 52 61 9d c3 d1 df", "Hopper", "9.0", "NVIDIA H200 141GB HBM3e"},
	"dgxb200": {[]string{"3g.90gb", "1g.23gb"}, "1b 43 52 61 9d c3 d1 df", "Blackwell", "10.0", "NVIDIA B200 180GB HBM3e"},
}

// TestBackendsAgree checks, on every mock board, that NVML and procfs
// discovery describe the same GPUs, MIG devices and nodes, that the fields
// only NVML knows are set by it and empty from procfs, and that both match
// the mock's ground truth.
func TestBackendsAgree(t *testing.T) {
	require.Len(t, boards, len(fakenvml.Machines()), "boards table covers %d of %v", len(boards), fakenvml.Machines())
	for machine, b := range boards {
		t.Run(machine, func(t *testing.T) {
			t.Parallel()
			h := genHost(t, &fakehost.Options{Machine: machine, MIG: map[int][]string{1: b.mig}})
			byNVML, byProc := discover(t, h, devices.NVML), discover(t, h, devices.Procfs)
			buses := strings.Fields(b.buses)
			require.Len(t, byNVML.GPUs, 8, "GPUs by NVML")
			require.Len(t, byProc.GPUs, 8, "GPUs by procfs")
			for i := range byNVML.GPUs {
				n, p := byNVML.GPUs[i], byProc.GPUs[i]
				checkTruth(t, h, machine, i, "00000000:"+buses[i]+":00.0", n)
				checkNVMLOnly(t, b.arch, b.cc, n, p)
				n.Brand, n.Architecture, n.ComputeCapability = "", "", ""
				n.MIGDevices, p.MIGDevices = stripNVMLOnly(t, n.MIGDevices), stripNVMLOnly(t, p.MIGDevices)
				assert.Equal(t, n, p, "GPU %d differs (NVML, procfs)", i)
			}
			assert.Equal(t, b.firstModel, byNVML.GPUs[0].Model, "GPU 0 model")
			assert.Len(t, byNVML.GPUs[1].MIGDevices, 2, "GPU 1 MIG devices")
			checkHostAgree(t, byNVML, byProc)
		})
	}
}

func checkTruth(t *testing.T, h *fakehost.Host, machine string, i int, bus string, g devices.GPU) {
	t.Helper()
	assert.Equal(t, i, g.Index, "GPU %d: index", i)
	assert.Equal(t, uint32(i), g.Minor, "GPU %d: minor", i)
	assert.Equal(t, fakenvml.GPUUUID(machine, i), g.UUID, "GPU %d: uuid", i)
	assert.Equal(t, bus, g.BusID, "GPU %d: bus", i)
	assert.Equal(t, devices.Node{Path: fmt.Sprintf("/dev/nvidia%d", i), Major: 195, Minor: uint32(i)}, g.Node, "GPU %d: node", i)
	assert.Equal(t, "/proc/driver/nvidia/gpus/"+bus[4:], g.ProcDir, "GPU %d: proc dir", i)
	_, err := os.Stat(h.ProcRoot + strings.TrimPrefix(g.ProcDir, "/proc"))
	assert.NoError(t, err, "GPU %d proc dir", i)
}

func checkNVMLOnly(t *testing.T, arch, cc string, n, p devices.GPU) {
	t.Helper()
	assert.Equal(t, [3]string{"Nvidia", arch, cc}, [3]string{n.Brand, n.Architecture, n.ComputeCapability}, "NVML GPU %d: brand, arch, cc", n.Index)
	assert.Equal(t, [3]string{}, [3]string{p.Brand, p.Architecture, p.ComputeCapability}, "procfs GPU %d claims NVML-only facts", p.Index)
}

// stripNVMLOnly clears UUID and Profile, after checking that they are set
// (NVML) or both empty (procfs).
func stripNVMLOnly(t *testing.T, ms []devices.MIGDevice) []devices.MIGDevice {
	t.Helper()
	out := make([]devices.MIGDevice, len(ms))
	for k, m := range ms {
		assert.Equal(t, m.UUID == "", m.Profile == "", "MIG device %d:%d has UUID %q and profile %q", m.Parent, m.Index, m.UUID, m.Profile)
		m.UUID, m.Profile = "", ""
		out[k] = m
	}
	return out
}

func checkHostAgree(t *testing.T, n, p *devices.Host) {
	t.Helper()
	n.Backend, p.Backend = "", ""
	n.GPUs, p.GPUs = nil, nil
	assert.Equal(t, n, p, "host facts differ (NVML, procfs)")
}

func TestHostFacts(t *testing.T) {
	h := genHost(t, &fakehost.Options{IMEXChannels: 2})
	d := discover(t, h, devices.Procfs)
	want := []devices.Node{
		{Path: "/dev/nvidiactl", Major: 195, Minor: 255},
		{Path: "/dev/nvidia-uvm", Major: 510, Minor: 0},
		{Path: "/dev/nvidia-uvm-tools", Major: 510, Minor: 1},
		{Path: "/dev/nvidia-modeset", Major: 195, Minor: 254},
	}
	assert.Equal(t, want, d.ControlNodes, "control nodes")
	if assert.Len(t, d.IMEXChannels, 2, "IMEX channels") {
		assert.Equal(t, devices.Node{Path: "/dev/nvidia-caps-imex-channels/channel1", Major: 234, Minor: 1}, d.IMEXChannels[1].Node, "IMEX channel 1")
	}
	assert.Equal(t, devices.NVCapsDev, d.NVCapsStyle, "caps style")
	assert.Equal(t, uint32(511), d.CapsMajor, "caps major")
	assert.Equal(t, uint32(234), d.IMEXMajor, "IMEX major")
	wantCfg := devices.Cap{Proc: "/proc/driver/nvidia/capabilities/mig/config", Node: &devices.Node{Path: "/dev/nvidia-caps/nvidia-cap1", Major: 511, Minor: 1}}
	require.NotNil(t, d.MIGConfig, "MIG config")
	assert.Equal(t, wantCfg, *d.MIGConfig, "MIG config")
	if assert.NotNil(t, d.MIGMonitor, "MIG monitor") && assert.NotNil(t, d.MIGMonitor.Node, "MIG monitor node") {
		assert.Equal(t, uint32(2), d.MIGMonitor.Node.Minor, "MIG monitor minor")
	}
	assert.Equal(t, h.DevRoot+"/nvidia-caps/nvidia-cap1", d.HostPath("/dev/nvidia-caps/nvidia-cap1"), "HostPath maps wrongly")
	assert.Equal(t, h.ProcRoot+"/driver/nvidia/capabilities/mig/config", d.HostPath(d.MIGConfig.Proc), "HostPath maps wrongly")
	assert.Equal(t, h.Root+"/usr/bin/nvidia-smi", d.HostPath("/usr/bin/nvidia-smi"), "HostPath maps wrongly")
	// The host must survive a JSON round trip unchanged: it is plain data.
	data, err := json.Marshal(d)
	require.NoError(t, err, "JSON round trip")
	var back devices.Host
	require.NoError(t, json.Unmarshal(data, &back), "JSON round trip: %s", data)
	assert.Equal(t, d, &back, "JSON round trip: %s", data)
}

// TestAuto checks the backend choice: an injected NVML that initialises is
// used; a driver root whose libnvidia-ml.so.1 is not NVML (the fake host's
// is an ELF object without NVML's symbols) or has none falls back to
// procfs and says why (in a build without cgo, that NVML cannot be
// loaded at all); forcing NVML then fails with ErrNVMLUnavailable.
func TestAuto(t *testing.T) {
	h := genHost(t, nil)
	d, err := devices.Discover(context.Background(), optionsFor(h, devices.Auto))
	require.NoError(t, err, "auto with a working NVML")
	assert.Equal(t, devices.NVML, d.Backend, "auto with a working NVML: backend")
	assert.Empty(t, d.NVMLError, "auto with a working NVML: NVML error")
	for root, want := range map[string]string{h.Root: autoNVMLErrors[0], t.TempDir(): autoNVMLErrors[1]} {
		o := optionsFor(h, devices.Auto)
		o.NVML, o.Roots.Driver = nil, root
		d, err := devices.Discover(context.Background(), o)
		if assert.NoError(t, err, "root %s", root) {
			assert.Equal(t, devices.Procfs, d.Backend, "root %s: backend", root)
			assert.Contains(t, d.NVMLError, want, "root %s: NVML error", root)
			assert.Len(t, d.GPUs, 8, "root %s: GPUs", root)
		}
		o.Backend = devices.NVML
		_, err = devices.Discover(context.Background(), o)
		if assert.ErrorIs(t, err, devices.ErrNVMLUnavailable, "forced NVML under %s", root) {
			assert.ErrorContains(t, err, want, "forced NVML under %s", root)
		}
	}
}

func TestNVMLInitFailure(t *testing.T) {
	h := genHost(t, nil)
	why := errors.New("ERROR_DRIVER_NOT_LOADED")
	s := &countingNVML{NVMLInterface: h.NVML, initErr: why}
	o := optionsFor(h, devices.Auto)
	o.NVML = s
	d, err := devices.Discover(context.Background(), o)
	if assert.NoError(t, err, "auto") {
		assert.Equal(t, devices.Procfs, d.Backend, "auto: backend")
		assert.Equal(t, "NVML unavailable: initialising NVML: ERROR_DRIVER_NOT_LOADED", d.NVMLError, "auto: NVML error")
	}
	o.Backend = devices.NVML
	_, err = devices.Discover(context.Background(), o)
	assert.ErrorIs(t, err, devices.ErrNVMLUnavailable, "forced")
	assert.ErrorIs(t, err, why, "forced")
	assert.Zero(t, s.shutdowns, "Shutdown called after a failed Init")
}

func TestNVMLShutdownPaired(t *testing.T) {
	h := genHost(t, nil)
	s := &countingNVML{NVMLInterface: h.NVML}
	o := optionsFor(h, devices.NVML)
	o.NVML = s
	_, err := devices.Discover(context.Background(), o)
	require.NoError(t, err)
	assert.Equal(t, 1, s.inits, "Init calls")
	assert.Equal(t, 1, s.shutdowns, "Shutdown calls")
}

func TestNoDriver(t *testing.T) {
	h := genHost(t, nil)
	require.NoError(t, os.RemoveAll(h.ProcRoot+"/driver/nvidia"))
	_, err := devices.Discover(context.Background(), optionsFor(h, devices.Procfs))
	assert.ErrorIs(t, err, devices.ErrNoDriver)
	_, err = devices.Discover(context.Background(), &devices.Options{Backend: "cuda", Roots: driver.Roots{Proc: h.ProcRoot}})
	assert.ErrorIs(t, err, devices.ErrInvalid, "bad backend")
}

// TestProcDirLongDomain checks that a GPU whose proc directory the driver
// names with an 8-digit PCI domain is found under that name by both
// backends, as libnvidia-container tries %08x before %04x; the others keep
// the 4-digit name.
func TestProcDirLongDomain(t *testing.T) {
	h := genHost(t, nil)
	gpus := h.ProcRoot + "/driver/nvidia/gpus/"
	require.NoError(t, os.Rename(gpus+"0000:0f:00.0", gpus+"00000000:0f:00.0"))
	for _, b := range []devices.Backend{devices.NVML, devices.Procfs} {
		d := discover(t, h, b)
		assert.Equal(t, "/proc/driver/nvidia/gpus/00000000:0f:00.0", d.GPUs[1].ProcDir, "%s: GPU 1 proc dir", b)
		assert.Equal(t, "/proc/driver/nvidia/gpus/0000:07:00.0", d.GPUs[0].ProcDir, "%s: GPU 0 proc dir", b)
		_, err := os.Stat(d.HostPath(d.GPUs[1].ProcDir))
		assert.NoError(t, err, b)
	}
}

// TestDevRootDefault checks that an empty DevRoot means the driver root's
// dev directory, as libnvidia-container looks nodes up inside --root: the
// fake host's nvidia-uvm, nvidia-modeset and IMEX channel nodes exist only
// under Root/dev.
func TestDevRootDefault(t *testing.T) {
	h := genHost(t, &fakehost.Options{IMEXChannels: 2})
	o := optionsFor(h, devices.Procfs)
	o.Roots.Dev = ""
	d, err := devices.Discover(context.Background(), o)
	require.NoError(t, err)
	assert.Equal(t, h.Root+"/dev", d.Roots.Dev, "dev root")
	assert.Equal(t, h.DevRoot+"/nvidia-uvm", d.HostPath(devices.DevNvidiaUVM), "nvidia-uvm")
	assert.Len(t, d.ControlNodes, 4, "control nodes")
	assert.Len(t, d.IMEXChannels, 2, "IMEX channels")
	o = optionsFor(h, devices.Procfs)
	o.Roots.Driver, o.Roots.Dev = "", ""
	d, err = devices.Discover(context.Background(), o)
	require.NoError(t, err, "default roots")
	assert.Equal(t, "/dev", d.Roots.Dev, "default dev root")
	assert.Equal(t, "/", d.Roots.Driver, "default driver root")
}

// TestNoVersions: package driver alone owns the driver and CUDA versions.
// A Host carries neither, and NVML discovery never asks NVML for them:
// an NVML whose version calls fail still discovers.
func TestNoVersions(t *testing.T) {
	for i := range reflect.TypeFor[devices.Host]().NumField() {
		f := reflect.TypeFor[devices.Host]().Field(i)
		assert.NotContains(t, f.Name, "Version", "devices.Host field %s", f.Name)
	}
	h := genHost(t, nil)
	o := optionsFor(h, devices.NVML)
	o.NVML = noVersionNVML{h.NVML}
	d, err := devices.Discover(context.Background(), o)
	require.NoError(t, err, "discovery asked NVML for a version")
	assert.Len(t, d.GPUs, 8)
	data, err := json.Marshal(d)
	require.NoError(t, err)
	assert.NotContains(t, string(data), "ersion\"", "host JSON: %s", data)
}

// noVersionNVML fails the version calls, which discovery must not make.
type noVersionNVML struct{ devices.NVMLInterface }

func (noVersionNVML) SystemDriverVersion() (string, error) {
	return "", errors.New("asked for the driver version")
}

func (noVersionNVML) SystemCUDADriverVersion() (int, error) {
	return 0, errors.New("asked for the CUDA version")
}
