package devices

import (
	"errors"

	"github.com/go-nvc/nvc/internal/sentinel"
)

// NVMLInterface is the part of NVML discovery calls, in plain Go types, so
// that the package builds without cgo. A cgo build gets an implementation
// over github.com/NVIDIA/go-nvml from NewNVMLFromGoNVML, and Discover loads
// libnvidia-ml.so.1 through it; tests and simulators implement it in Go.
//
// A failed call returns an error; ErrNVMLNotSupported and ErrNVMLNotFound
// stand for NVML's NOT_SUPPORTED (or FUNCTION_NOT_FOUND) and NOT_FOUND,
// which discovery treats as answers rather than failures.
//
// Package driver asks for the versions through the same four System and
// Init/Shutdown methods, so an NVMLInterface serves both packages.
type NVMLInterface interface {
	// Init and Shutdown bracket every other call.
	Init() error
	Shutdown() error
	// SystemDriverVersion is the NVRM version, e.g. "550.54.15".
	SystemDriverVersion() (string, error)
	// SystemCUDADriverVersion is the CUDA driver version as NVML encodes it:
	// major*1000 + minor*10 (12040 is CUDA 12.4).
	SystemCUDADriverVersion() (int, error)
	// DeviceCount is the number of GPUs; DeviceByIndex the GPU at NVML
	// index i (PCI bus order).
	DeviceCount() (int, error)
	DeviceByIndex(i int) (NVMLDevice, error)
}

// NVMLDevice is a GPU or a MIG device as NVMLInterface returns it. The MIG
// calls of a GPU (MIGMode, MaxMIGDeviceCount, MIGDeviceByIndex) and the
// instance calls of a MIG device (GPUInstanceID, ComputeInstanceID,
// Attributes) are the only ones discovery makes on the other kind.
type NVMLDevice interface {
	// MinorNumber is the minor of /dev/nvidiaN.
	MinorNumber() (int, error)
	// UUID is "GPU-…" for a GPU, "MIG-…" for a MIG device.
	UUID() (string, error)
	// PCIInfo is the GPU's PCI address.
	PCIInfo() (PCIAddress, error)
	// Name is the product name; a MIG device's ends in " MIG <profile>".
	Name() (string, error)
	// Brand is the brand as libnvidia-container prints it ("Tesla",
	// "Nvidia", …; "Unknown" for a brand it does not name).
	Brand() (string, error)
	// Architecture is the architecture name ("Ampere", "Hopper", …;
	// "Unknown" for one it does not name). ErrNVMLNotSupported on drivers
	// that cannot tell.
	Architecture() (string, error)
	// CUDAComputeCapability is the compute capability, e.g. 8, 0.
	CUDAComputeCapability() (major, minor int, err error)
	// MIGMode says whether MIG is on now and after the next reset.
	// ErrNVMLNotSupported on a GPU without MIG.
	MIGMode() (current, pending bool, err error)
	// MaxMIGDeviceCount bounds the indices of MIGDeviceByIndex.
	MaxMIGDeviceCount() (int, error)
	// MIGDeviceByIndex is the MIG device at index i, ErrNVMLNotFound when
	// that index holds none.
	MIGDeviceByIndex(i int) (NVMLDevice, error)
	// GPUInstanceID and ComputeInstanceID are a MIG device's instance ids.
	GPUInstanceID() (int, error)
	ComputeInstanceID() (int, error)
	// Attributes are a MIG device's slice counts and memory.
	Attributes() (NVMLAttributes, error)
}

// PCIAddress is a GPU's PCI domain, bus and device numbers.
type PCIAddress struct {
	Domain, Bus, Device uint32
}

// NVMLAttributes are what a MIG profile is rebuilt from when a MIG device's
// name does not carry it.
type NVMLAttributes struct {
	GPUInstanceSliceCount     uint32
	ComputeInstanceSliceCount uint32
	MemorySizeMB              uint64
}

// NVML errors an NVMLInterface returns for answers that are not failures.
var (
	// ErrNVMLNotSupported: the GPU or driver does not support the call
	// (NVML's ERROR_NOT_SUPPORTED or ERROR_FUNCTION_NOT_FOUND). It
	// matches driver.ErrNotSupported (and ldcache's, the same value).
	ErrNVMLNotSupported = sentinel.Mark(errors.New("not supported by NVML"), sentinel.ErrNotSupported)
	// ErrNVMLNotFound: nothing at that index (NVML's ERROR_NOT_FOUND).
	ErrNVMLNotFound = errors.New("not found by NVML")
)
