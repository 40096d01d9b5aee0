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

	"github.com/go-nvc/nvc/devices"
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
	if len(boards) != len(fakenvml.Machines()) {
		t.Fatalf("boards table covers %d of %v", len(boards), fakenvml.Machines())
	}
	for machine, b := range boards {
		t.Run(machine, func(t *testing.T) {
			t.Parallel()
			h := genHost(t, &fakehost.Options{Machine: machine, MIG: map[int][]string{1: b.mig}})
			byNVML, byProc := discover(t, h, devices.NVML), discover(t, h, devices.Procfs)
			buses := strings.Fields(b.buses)
			if len(byNVML.GPUs) != 8 || len(byProc.GPUs) != 8 {
				t.Fatalf("GPUs: NVML %d, procfs %d; want 8", len(byNVML.GPUs), len(byProc.GPUs))
			}
			for i := range byNVML.GPUs {
				n, p := byNVML.GPUs[i], byProc.GPUs[i]
				checkTruth(t, h, machine, i, "00000000:"+buses[i]+":00.0", n)
				checkNVMLOnly(t, b.arch, b.cc, n, p)
				n.Brand, n.Architecture, n.ComputeCapability = "", "", ""
				n.MIGDevices, p.MIGDevices = stripNVMLOnly(t, n.MIGDevices), stripNVMLOnly(t, p.MIGDevices)
				if !reflect.DeepEqual(n, p) {
					t.Errorf("GPU %d differs:\nNVML   %+v\nprocfs %+v", i, n, p)
				}
			}
			if byNVML.GPUs[0].Model != b.firstModel || len(byNVML.GPUs[1].MIGDevices) != 2 {
				t.Errorf("GPU 0 model %q, GPU 1 has %d MIG devices", byNVML.GPUs[0].Model, len(byNVML.GPUs[1].MIGDevices))
			}
			checkHostAgree(t, byNVML, byProc)
		})
	}
}

func checkTruth(t *testing.T, h *fakehost.Host, machine string, i int, bus string, g devices.GPU) {
	t.Helper()
	if g.Index != i || g.Minor != uint32(i) || g.UUID != fakenvml.GPUUUID(machine, i) || g.BusID != bus {
		t.Errorf("GPU %d: index %d minor %d uuid %s bus %s; want bus %s", i, g.Index, g.Minor, g.UUID, g.BusID, bus)
	}
	wantNode := devices.Node{Path: fmt.Sprintf("/dev/nvidia%d", i), Major: 195, Minor: uint32(i)}
	if g.Node != wantNode || g.ProcDir != "/proc/driver/nvidia/gpus/"+bus[4:] {
		t.Errorf("GPU %d: node %+v proc dir %s", i, g.Node, g.ProcDir)
	}
	if _, err := os.Stat(h.ProcRoot + strings.TrimPrefix(g.ProcDir, "/proc")); err != nil {
		t.Errorf("GPU %d proc dir: %v", i, err)
	}
}

func checkNVMLOnly(t *testing.T, arch, cc string, n, p devices.GPU) {
	t.Helper()
	if n.Brand != "Nvidia" || n.Architecture != arch || n.ComputeCapability != cc {
		t.Errorf("NVML GPU %d: brand %q arch %q cc %q; want Nvidia %s %s", n.Index, n.Brand, n.Architecture, n.ComputeCapability, arch, cc)
	}
	if p.Brand != "" || p.Architecture != "" || p.ComputeCapability != "" {
		t.Errorf("procfs GPU %d claims NVML-only facts: %q %q %q", p.Index, p.Brand, p.Architecture, p.ComputeCapability)
	}
}

// stripNVMLOnly clears UUID and Profile, after checking that they are set
// (NVML) or both empty (procfs).
func stripNVMLOnly(t *testing.T, ms []devices.MIGDevice) []devices.MIGDevice {
	t.Helper()
	out := make([]devices.MIGDevice, len(ms))
	for k, m := range ms {
		if (m.UUID == "") != (m.Profile == "") {
			t.Errorf("MIG device %d:%d has UUID %q and profile %q", m.Parent, m.Index, m.UUID, m.Profile)
		}
		m.UUID, m.Profile = "", ""
		out[k] = m
	}
	return out
}

func checkHostAgree(t *testing.T, n, p *devices.Host) {
	t.Helper()
	if n.CUDAVersion != "12.4" || p.CUDAVersion != "" || n.DriverVersion != "550.54.15" || p.DriverVersion != n.DriverVersion {
		t.Errorf("versions: NVML %s/%s, procfs %s/%s", n.DriverVersion, n.CUDAVersion, p.DriverVersion, p.CUDAVersion)
	}
	n.Backend, n.CUDAVersion, p.Backend = "", "", ""
	n.GPUs, p.GPUs = nil, nil
	if !reflect.DeepEqual(n, p) {
		t.Errorf("host facts differ:\nNVML   %+v\nprocfs %+v", n, p)
	}
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
	if !reflect.DeepEqual(d.ControlNodes, want) {
		t.Errorf("control nodes %+v", d.ControlNodes)
	}
	if len(d.IMEXChannels) != 2 || d.IMEXChannels[1].Node != (devices.Node{Path: "/dev/nvidia-caps-imex-channels/channel1", Major: 234, Minor: 1}) {
		t.Errorf("IMEX channels %+v", d.IMEXChannels)
	}
	if d.NVCapsStyle != devices.NVCapsDev || d.CapsMajor != 511 || d.IMEXMajor != 234 {
		t.Errorf("caps style %s major %d imex %d", d.NVCapsStyle, d.CapsMajor, d.IMEXMajor)
	}
	wantCfg := devices.Cap{Proc: "/proc/driver/nvidia/capabilities/mig/config", Node: &devices.Node{Path: "/dev/nvidia-caps/nvidia-cap1", Major: 511, Minor: 1}}
	if d.MIGConfig == nil || !reflect.DeepEqual(*d.MIGConfig, wantCfg) || d.MIGMonitor == nil || d.MIGMonitor.Node.Minor != 2 {
		t.Errorf("MIG config %+v monitor %+v", d.MIGConfig, d.MIGMonitor)
	}
	if d.HostPath("/dev/nvidia-caps/nvidia-cap1") != h.DevRoot+"/nvidia-caps/nvidia-cap1" ||
		d.HostPath(d.MIGConfig.Proc) != h.ProcRoot+"/driver/nvidia/capabilities/mig/config" ||
		d.HostPath("/usr/bin/nvidia-smi") != h.Root+"/usr/bin/nvidia-smi" {
		t.Errorf("HostPath maps wrongly")
	}
	// The host must survive a JSON round trip unchanged: it is plain data.
	data, err := json.Marshal(d)
	var back devices.Host
	if err == nil {
		err = json.Unmarshal(data, &back)
	}
	if err != nil || !reflect.DeepEqual(&back, d) {
		t.Errorf("JSON round trip: %v\n%s", err, data)
	}
}

// TestAuto checks the backend choice: an injected NVML that initialises is
// used; a driver root whose libnvidia-ml.so.1 is not NVML (the fake host's
// is an ELF object without NVML's symbols) or has none falls back to
// procfs and says why (in a build without cgo, that NVML cannot be
// loaded at all); forcing NVML then fails with ErrNVMLUnavailable.
func TestAuto(t *testing.T) {
	h := genHost(t, nil)
	if d, err := devices.Discover(context.Background(), optionsFor(h, devices.Auto)); err != nil || d.Backend != devices.NVML || d.NVMLError != "" {
		t.Errorf("auto with a working NVML: %v, backend %s, NVML error %q", err, d.Backend, d.NVMLError)
	}
	for root, want := range map[string]string{h.Root: autoNVMLErrors[0], t.TempDir(): autoNVMLErrors[1]} {
		o := optionsFor(h, devices.Auto)
		o.NVML, o.DriverRoot = nil, root
		d, err := devices.Discover(context.Background(), o)
		if err != nil || d.Backend != devices.Procfs || !strings.Contains(d.NVMLError, want) || len(d.GPUs) != 8 {
			t.Errorf("root %s: %v, backend %v, NVML error %q", root, err, d.Backend, d.NVMLError)
		}
		o.Backend = devices.NVML
		if _, err := devices.Discover(context.Background(), o); !errors.Is(err, devices.ErrNVMLUnavailable) || !strings.Contains(err.Error(), want) {
			t.Errorf("forced NVML under %s: %v", root, err)
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
	if err != nil || d.Backend != devices.Procfs || d.NVMLError != "NVML unavailable: initialising NVML: ERROR_DRIVER_NOT_LOADED" {
		t.Errorf("auto: %v %+v", err, d)
	}
	o.Backend = devices.NVML
	_, err = devices.Discover(context.Background(), o)
	if !errors.Is(err, devices.ErrNVMLUnavailable) || !errors.Is(err, why) {
		t.Errorf("forced: %v", err)
	}
	if s.shutdowns != 0 {
		t.Error("Shutdown called after a failed Init")
	}
}

func TestNVMLShutdownPaired(t *testing.T) {
	h := genHost(t, nil)
	s := &countingNVML{NVMLInterface: h.NVML}
	o := optionsFor(h, devices.NVML)
	o.NVML = s
	if _, err := devices.Discover(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	if s.inits != 1 || s.shutdowns != 1 {
		t.Errorf("Init called %d times, Shutdown %d", s.inits, s.shutdowns)
	}
}

func TestNoDriver(t *testing.T) {
	h := genHost(t, nil)
	if err := os.RemoveAll(h.ProcRoot + "/driver/nvidia"); err != nil {
		t.Fatal(err)
	}
	_, err := devices.Discover(context.Background(), optionsFor(h, devices.Procfs))
	if !errors.Is(err, devices.ErrNoDriver) {
		t.Errorf("err = %v, want ErrNoDriver", err)
	}
	if _, err := devices.Discover(context.Background(), &devices.Options{Backend: "cuda", ProcRoot: h.ProcRoot}); !errors.Is(err, devices.ErrInvalid) {
		t.Errorf("bad backend: %v", err)
	}
}

// TestProcDirLongDomain checks that a GPU whose proc directory the driver
// names with an 8-digit PCI domain is found under that name by both
// backends, as libnvidia-container tries %08x before %04x; the others keep
// the 4-digit name.
func TestProcDirLongDomain(t *testing.T) {
	h := genHost(t, nil)
	gpus := h.ProcRoot + "/driver/nvidia/gpus/"
	must(t, os.Rename(gpus+"0000:0f:00.0", gpus+"00000000:0f:00.0"))
	for _, b := range []devices.Backend{devices.NVML, devices.Procfs} {
		d := discover(t, h, b)
		if got := d.GPUs[1].ProcDir; got != "/proc/driver/nvidia/gpus/00000000:0f:00.0" {
			t.Errorf("%s: GPU 1 proc dir %s", b, got)
		}
		if got := d.GPUs[0].ProcDir; got != "/proc/driver/nvidia/gpus/0000:07:00.0" {
			t.Errorf("%s: GPU 0 proc dir %s", b, got)
		}
		if _, err := os.Stat(d.HostPath(d.GPUs[1].ProcDir)); err != nil {
			t.Errorf("%s: %v", b, err)
		}
	}
}

// TestDevRootDefault checks that an empty DevRoot means the driver root's
// dev directory, as libnvidia-container looks nodes up inside --root: the
// fake host's nvidia-uvm, nvidia-modeset and IMEX channel nodes exist only
// under Root/dev.
func TestDevRootDefault(t *testing.T) {
	h := genHost(t, &fakehost.Options{IMEXChannels: 2})
	o := optionsFor(h, devices.Procfs)
	o.DevRoot = ""
	d, err := devices.Discover(context.Background(), o)
	must(t, err)
	if d.Roots.Dev != h.Root+"/dev" || d.HostPath(devices.DevNvidiaUVM) != h.DevRoot+"/nvidia-uvm" {
		t.Errorf("dev root %s, nvidia-uvm at %s", d.Roots.Dev, d.HostPath(devices.DevNvidiaUVM))
	}
	if len(d.ControlNodes) != 4 || len(d.IMEXChannels) != 2 {
		t.Errorf("control nodes %v, IMEX channels %v", d.ControlNodes, d.IMEXChannels)
	}
	o = optionsFor(h, devices.Procfs)
	o.DriverRoot, o.DevRoot = "", ""
	if d, err = devices.Discover(context.Background(), o); err != nil || d.Roots.Dev != "/dev" || d.Roots.Driver != "/" {
		t.Errorf("default roots: %v, %+v", err, d.Roots)
	}
}

// TestNVMLCUDAVersion: NVML gives the CUDA driver version as
// major*1000 + minor*10, so a two-digit minor is read whole (12.10, not 12.0).
func TestNVMLCUDAVersion(t *testing.T) {
	h := genHost(t, nil)
	for v, want := range map[int]string{12040: "12.4", 12100: "12.10", 13000: "13.0"} {
		s, err := fakenvml.New("dgxa100", &fakenvml.Options{CUDADriverVersion: v})
		if err != nil {
			t.Fatal(err)
		}
		o := optionsFor(h, devices.NVML)
		o.NVML = s
		d, err := devices.Discover(context.Background(), o)
		if err != nil {
			t.Fatal(err)
		}
		if d.CUDAVersion != want {
			t.Errorf("NVML CUDA version %d: got %q, want %q", v, d.CUDAVersion, want)
		}
	}
}
