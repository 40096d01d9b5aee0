package nvctest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"

	"github.com/go-nvc/nvc/devices"
	"github.com/go-nvc/nvc/driver"
	"github.com/go-nvc/nvc/internal/fakehost"
	"github.com/go-nvc/nvc/internal/fakenvml"
	"github.com/go-nvc/nvc/nvcontainer"
)

// Machine names a simulated DGX: eight GPUs of one model on their real PCI
// buses, minors 0-7, every GPU MIG-capable.
type Machine string

// The simulated machines, as go-nvml's DGX mocks describe them.
const (
	DGXA100 Machine = "dgxa100" // 8 × A100-SXM4-40GB (Ampere)
	DGXH100 Machine = "dgxh100" // 8 × H100 80GB HBM3 (Hopper)
	DGXH200 Machine = "dgxh200" // 8 × H200 141GB HBM3e (Hopper)
	DGXB200 Machine = "dgxb200" // 8 × B200 180GB HBM3e (Blackwell)
)

// DefaultDriverVersion is the driver version of a host whose Options leave
// it empty: that of go-nvml's DGX mocks.
const DefaultDriverVersion = "550.54.15"

// ErrUnknownMachine is matched by the error of ParseMachine, Generate and
// GenerateTemp for a machine they do not know.
var ErrUnknownMachine = errors.New("unknown simulated machine")

// Machines lists the simulated machines, sorted by name.
func Machines() []Machine {
	var ms []Machine
	for _, n := range fakenvml.Machines() {
		ms = append(ms, Machine(n))
	}
	ms = append(ms, JetsonOrin, WSL)
	slices.Sort(ms)
	return ms
}

// ParseMachine returns the machine named s (a --simulate flag's value).
func ParseMachine(s string) (Machine, error) {
	if !slices.Contains(Machines(), Machine(s)) {
		return "", fmt.Errorf("%w %q (want one of %s)", ErrUnknownMachine, s, machineList())
	}
	return Machine(s), nil
}

// MIGProfiles lists the GPU instance profiles m's GPUs offer, by the names
// Options.MIG takes ("1g.5gb", "3g.20gb", …), in NVML's profile id order.
func (m Machine) MIGProfiles() []string {
	s, err := fakenvml.New(string(m), nil)
	if err != nil {
		return nil
	}
	return fakenvml.ProfileNames(s)
}

// GPUUUID is the UUID of GPU index i of m: the same on every run and
// every host generated for m ("GPU-" and a name-based UUID).
func (m Machine) GPUUUID(i int) string { return fakenvml.GPUUUID(string(m), i) }

// MIGUUID is the UUID of the MIG device with GPU instance gi and compute
// instance ci on GPU index i of m.
func (m Machine) MIGUUID(i, gi, ci int) string { return fakenvml.MIGUUID(string(m), i, gi, ci) }

// Layout chooses where the driver's files live in the generated tree.
type Layout int

// Layouts of the generated host.
const (
	// Debian is Debian 12's: multiarch library dirs
	// (/usr/lib/x86_64-linux-gnu, /usr/lib/i386-linux-gnu).
	Debian Layout = iota
	// Fedora is Fedora 40's: /usr/lib64 and /usr/lib.
	Fedora
)

// Options change the generated host. A nil *Options, like a zero one,
// means a host without MIG, driver DefaultDriverVersion, the Debian
// layout, one IMEX channel and plain files for device nodes.
type Options struct {
	// MIG puts GPUs in MIG mode: the key is a GPU index, the value lists
	// that GPU's MIG devices by profile name (Machine.MIGProfiles), created
	// in order. "3g.20gb" is a GPU instance whose single compute instance
	// spans it; "1c.3g.20gb" a one-slice compute instance in its own
	// 3-slice GPU instance. An empty list enables MIG with no devices.
	// Nil: no GPU is in MIG mode.
	MIG map[int][]string
	// DriverVersion is the NVRM version the driver files, procfs and NVML
	// report. Empty: DefaultDriverVersion.
	DriverVersion string
	// Layout of the driver files. Zero: Debian.
	Layout Layout
	// RealNodes makes the device nodes under Roots.Dev real character
	// devices (needs CAP_MKNOD), as a test that applies a plan needs.
	// False: plain files standing in for them.
	RealNodes bool
	// IMEXChannels is how many /dev/nvidia-caps-imex-channels/channelN
	// nodes to create. Zero: one (channel0); negative: none.
	IMEXChannels int
}

// Host is a generated host: a directory tree with the driver's files, an
// ld.so.cache, procfs and /dev, and the fake NVML that describes the same
// GPUs.
type Host struct {
	// Machine is the simulated machine.
	Machine Machine
	// Roots are the host's roots: Roots.Driver is the driver root, the
	// host's file system image (what nvidia-container-cli --root names);
	// Proc and Dev stand for /proc and /dev (<driver root>/proc and
	// <driver root>/dev); LDCache is the host's ld.so.cache, a path
	// inside the driver root.
	Roots driver.Roots
	// LibDir and Lib32Dir are the driver's library dirs, as paths inside
	// the driver root (/usr/lib/x86_64-linux-gnu and /usr/lib/i386-linux-gnu in the
	// Debian layout).
	LibDir, Lib32Dir string
	// DriverVersion is the NVRM version; CUDAVersion the driver's CUDA
	// version, "MAJOR.MINOR".
	DriverVersion, CUDAVersion string
	// NVML is the fake NVML of the machine: the same GPUs, UUIDs, bus ids
	// and MIG devices as the procfs and dev trees. It needs no cgo and is
	// safe for concurrent use.
	NVML devices.NVMLInterface
}

// Generate writes a host of machine m into dir, which must exist and be
// empty. On error, what was written stays in dir.
func Generate(dir string, m Machine, opts *Options) (*Host, error) {
	if _, err := ParseMachine(string(m)); err != nil {
		return nil, err
	}
	if m == WSL {
		return generateWSL(dir, opts)
	}
	var o Options
	if opts != nil {
		o = *opts
	}
	if m.IsTegra() {
		return generateJetson(dir, m, o)
	}
	if o.DriverVersion == "" {
		o.DriverVersion = DefaultDriverVersion
	}
	fo := &fakehost.Options{Machine: string(m), DriverVersion: o.DriverVersion, MIG: o.MIG,
		RealNodes: o.RealNodes, IMEXChannels: o.IMEXChannels, Layout: fakehost.Debian}
	if o.Layout == Fedora {
		fo.Layout = fakehost.Fedora
	}
	fh, err := fakehost.Generate(dir, fo)
	if err != nil {
		return nil, fmt.Errorf("nvctest: %w", err)
	}
	roots := driver.Roots{Driver: fh.Root, Proc: fh.ProcRoot, Dev: fh.DevRoot, LDCache: driver.DefaultLDCache, Sys: fh.SysRoot}
	return &Host{Machine: m, Roots: roots, LibDir: fh.LibDir, Lib32Dir: fh.Lib32Dir,
		DriverVersion: fh.DriverVersion, CUDAVersion: fh.CUDAVersion, NVML: fh.NVML}, nil
}

// GenerateTemp writes a host of machine m into a new directory under
// os.TempDir(), as a program's --simulate flag does; Remove deletes it. On
// error nothing is left behind.
func GenerateTemp(m Machine, opts *Options) (*Host, error) {
	if _, err := ParseMachine(string(m)); err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "nvctest-"+string(m)+"-")
	if err != nil {
		return nil, fmt.Errorf("nvctest: %w", err)
	}
	h, err := Generate(dir, m, opts)
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	return h, nil
}

// TB is the part of testing.TB that NewHost uses: a *testing.T, B or F.
// (The package does not import testing, so that a program's --simulate
// flag does not link it.)
type TB interface {
	Helper()
	TempDir() string
	Fatal(args ...any)
}

// NewHost writes a host of machine m into a directory of t's (t.TempDir),
// removed when the test ends; it stops the test on error.
func NewHost(t TB, m Machine, opts *Options) *Host {
	t.Helper()
	h, err := Generate(t.TempDir(), m, opts)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// Remove deletes the generated tree, the driver root included.
func (h *Host) Remove() error { return os.RemoveAll(h.Roots.Driver) }

// DriverOptions are the host's roots and its fake NVML, as driver.Open,
// nvcontainer.OpenHost and nvcontainer.PrepareHost take them. Each call
// returns a new value the caller may change.
func (h *Host) DriverOptions() *driver.Options {
	return &driver.Options{Roots: h.Roots, NVML: h.NVML}
}

// Open opens the host as a runtime opens a real one (nvcontainer.OpenHost:
// driver.Open and devices.Discover). With devices.Procfs the fake NVML is
// given to neither, as in a build without NVML: GPUs come from procfs and
// the CUDA version, brands and architectures are unknown. With
// devices.NVML or devices.Auto both use the fake NVML.
func (h *Host) Open(backend devices.Backend) (*nvcontainer.Host, error) {
	d := h.DriverOptions()
	if backend == devices.Procfs {
		d.NVML = nil
	}
	return nvcontainer.OpenHost(context.Background(), d, backend)
}
