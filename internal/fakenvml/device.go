package fakenvml

import (
	"fmt"

	"github.com/go-nvc/nvc/devices"
)

// gpu is one GPU of a Server.
type gpu struct {
	board *board
	index int
	bus   uint32
	uuid  string
	mig   bool
	migs  []*migDevice // by GPU instance id
}

var _ devices.NVMLDevice = (*gpu)(nil)

// notForGPU is the error of a MIG device's call made on a GPU.
func (g *gpu) notForGPU(call string) error {
	return fmt.Errorf("%s of GPU %d, not a MIG device: %w", call, g.index, ErrInvalidArgument)
}

func (g *gpu) MinorNumber() (int, error) { return g.index, nil }
func (g *gpu) UUID() (string, error)     { return g.uuid, nil }
func (g *gpu) Name() (string, error)     { return g.board.name, nil }
func (g *gpu) Brand() (string, error)    { return g.board.brand, nil }

func (g *gpu) PCIInfo() (devices.PCIAddress, error) {
	return devices.PCIAddress{Domain: 0, Bus: g.bus, Device: 0}, nil
}

func (g *gpu) Architecture() (string, error) { return g.board.arch, nil }

func (g *gpu) CUDAComputeCapability() (int, int, error) {
	return g.board.ccMajor, g.board.ccMinor, nil
}

func (g *gpu) MIGMode() (bool, bool, error) { return g.mig, g.mig, nil }

// MaxMIGDeviceCount is the instance count of the board's smallest GPU
// instance profile.
func (g *gpu) MaxMIGDeviceCount() (int, error) { return g.board.maxMIGDevices(), nil }

// MIGDeviceByIndex is the k-th MIG device in GPU instance id order;
// ErrNVMLNotFound for an index below the maximum with no device, as NVML.
func (g *gpu) MIGDeviceByIndex(k int) (devices.NVMLDevice, error) {
	switch {
	case k >= 0 && k < len(g.migs):
		return g.migs[k], nil
	case k >= 0 && k < g.board.maxMIGDevices():
		return nil, fmt.Errorf("MIG device %d of GPU %d: %w", k, g.index, devices.ErrNVMLNotFound)
	}
	return nil, fmt.Errorf("MIG device %d of GPU %d: %w", k, g.index, ErrInvalidArgument)
}

func (g *gpu) GPUInstanceID() (int, error)     { return 0, g.notForGPU("GPU instance id") }
func (g *gpu) ComputeInstanceID() (int, error) { return 0, g.notForGPU("compute instance id") }

func (g *gpu) Attributes() (devices.NVMLAttributes, error) {
	return devices.NVMLAttributes{}, g.notForGPU("attributes")
}

func (b *board) maxMIGDevices() int {
	n := 0
	for _, p := range b.profiles {
		n = max(n, int(p.instances))
	}
	return n
}

// migDevice is one GPU instance with its one compute instance.
type migDevice struct {
	parent     *gpu
	profile    string // e.g. "3g.20gb" or "1c.3g.20gb"
	gi         *giProfile
	ciSlices   uint32
	giID, ciID int
	uuid       string
}

var _ devices.NVMLDevice = (*migDevice)(nil)

// notForMIG is the error of a GPU's call made on a MIG device.
func (m *migDevice) notForMIG(call string) error {
	return fmt.Errorf("%s of MIG device %s: %w", call, m.uuid, ErrInvalidArgument)
}

func (m *migDevice) UUID() (string, error)           { return m.uuid, nil }
func (m *migDevice) Name() (string, error)           { return m.parent.board.name + " MIG " + m.profile, nil }
func (m *migDevice) GPUInstanceID() (int, error)     { return m.giID, nil }
func (m *migDevice) ComputeInstanceID() (int, error) { return m.ciID, nil }

func (m *migDevice) Attributes() (devices.NVMLAttributes, error) {
	return devices.NVMLAttributes{
		GPUInstanceSliceCount:     m.gi.slices,
		ComputeInstanceSliceCount: m.ciSlices,
		MemorySizeMB:              m.gi.memoryMB,
	}, nil
}

func (m *migDevice) MinorNumber() (int, error) { return 0, m.notForMIG("minor number") }
func (m *migDevice) Brand() (string, error)    { return "", m.notForMIG("brand") }

func (m *migDevice) PCIInfo() (devices.PCIAddress, error) {
	return devices.PCIAddress{}, m.notForMIG("PCI info")
}

func (m *migDevice) Architecture() (string, error) { return "", m.notForMIG("architecture") }

func (m *migDevice) CUDAComputeCapability() (int, int, error) {
	return 0, 0, m.notForMIG("compute capability")
}

func (m *migDevice) MIGMode() (bool, bool, error)    { return false, false, m.notForMIG("MIG mode") }
func (m *migDevice) MaxMIGDeviceCount() (int, error) { return 0, m.notForMIG("MIG device count") }

func (m *migDevice) MIGDeviceByIndex(int) (devices.NVMLDevice, error) {
	return nil, m.notForMIG("MIG device handle")
}
