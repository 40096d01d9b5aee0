package fakehost

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/go-nvc/nvc/devices"
	"github.com/go-nvc/nvc/internal/fakenvml"
)

// DefaultDriverVersion is the driver version of go-nvml's DGX mocks, the
// one fakenvml reports by default.
const DefaultDriverVersion = fakenvml.DefaultDriverVersion

// Layout chooses where the driver's libraries live.
type Layout string

// Layouts of the host filesystem.
const (
	Debian Layout = "debian" // multiarch dirs, /etc/debian_version
	Fedora Layout = "fedora" // /usr/lib64 and /usr/lib
)

// Options describe the host to generate. A nil *Options means defaults.
type Options struct {
	// DriverVersion is the NVRM version. Empty: DefaultDriverVersion.
	DriverVersion string
	// Machine names a simulated DGX (package fakenvml): "dgxa100",
	// "dgxh100", "dgxh200", "dgxb200". Empty: "dgxa100". Ignored when NVML
	// is set.
	Machine string
	// NVML is the GPU set. Nil: the fake NVML of Machine at DriverVersion,
	// with PCI bus ids and deterministic UUIDs (package fakenvml).
	NVML devices.NVMLInterface
	// Layout of the driver files. Empty: Debian.
	Layout Layout
	// RealNodes creates real character devices under dev/ (needs
	// CAP_MKNOD). False: plain files standing in for them.
	RealNodes bool
	// MIG puts GPUs of the Machine in MIG mode: GPU index to MIG
	// profile names, as fakenvml.Options.MIG. Nil: no MIG. Ignored when NVML
	// is set.
	MIG map[int][]string
	// IMEXChannels is how many /dev/nvidia-caps-imex-channels/channelN
	// nodes to create. Zero: one (channel0); negative: none.
	IMEXChannels int
}

// Host is a generated host.
type Host struct {
	// Root is the driver root: the host filesystem image.
	Root string
	// ProcRoot and DevRoot are Root/proc and Root/dev.
	ProcRoot, DevRoot string
	// SysRoot is Root/sys, the generated sysfs (PCI devices, DRM nodes,
	// loaded modules).
	SysRoot string
	// NVML describes the same GPUs as the procfs and dev trees.
	NVML devices.NVMLInterface
	// DriverVersion is the NVRM version; CUDAVersion the driver's CUDA
	// version as "MAJOR.MINOR".
	DriverVersion, CUDAVersion string
	// LibDir and Lib32Dir are the library dirs, as absolute paths inside Root
	// (e.g. /usr/lib/x86_64-linux-gnu).
	LibDir, Lib32Dir string
	// Layout is the layout used.
	Layout Layout
}

// Generate writes a host into dir, which must exist and be empty.
func Generate(dir string, opts *Options) (*Host, error) {
	o := withDefaults(opts)
	if err := checkEmpty(dir); err != nil {
		return nil, err
	}
	h, err := newHost(dir, o)
	if err != nil {
		return nil, fmt.Errorf("generating host in %s: %w", dir, err)
	}
	if err := writeGPUs(h, o); err != nil {
		return nil, fmt.Errorf("generating host in %s: %w", dir, err)
	}
	if err := writeDriver(h, o); err != nil {
		return nil, fmt.Errorf("generating host in %s: %w", dir, err)
	}
	return h, nil
}

// newHost is the Host of o in dir, before anything is written: its NVML is
// o.NVML or the fake NVML of o.Machine.
func newHost(dir string, o Options) (*Host, error) {
	h := &Host{
		Root:          dir,
		ProcRoot:      filepath.Join(dir, "proc"),
		DevRoot:       filepath.Join(dir, "dev"),
		SysRoot:       filepath.Join(dir, "sys"),
		NVML:          o.NVML,
		DriverVersion: o.DriverVersion,
		Layout:        o.Layout,
	}
	if h.NVML == nil {
		n, err := defaultNVML(o)
		if err != nil {
			return nil, err
		}
		h.NVML = n
	}
	return h, nil
}

func withDefaults(opts *Options) Options {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.DriverVersion == "" {
		o.DriverVersion = DefaultDriverVersion
	}
	if o.Machine == "" {
		o.Machine = "dgxa100"
	}
	if o.Layout == "" {
		o.Layout = Debian
	}
	return o
}

func checkEmpty(dir string) error {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("generating host: %w", err)
	}
	if len(ents) != 0 {
		return fmt.Errorf("generating host in %s: directory is not empty", dir)
	}
	return nil
}
