package devices

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// PCIVendorNVIDIA is NVIDIA's PCI vendor id.
const PCIVendorNVIDIA = 0x10de

// pciBaseClassDisplay is the PCI base class of display controllers (VGA
// 0x0300, 3D 0x0302, …): nvidia-modprobe loads a module only when a
// device of NVIDIA's with that base class is present.
const pciBaseClassDisplay = 0x03

// PCIDevice is one PCI function as sysfs describes it under
// <sys root>/bus/pci/devices/<BusID>.
type PCIDevice struct {
	// BusID is the function's address, as sysfs names it
	// ("0000:07:00.0").
	BusID string
	// Vendor and Device are the PCI vendor and device ids; Class is the
	// 24-bit class code (base class, subclass, programming interface).
	Vendor, Device uint16
	Class          uint32
}

// NVIDIADisplay says whether d is an NVIDIA display controller (vendor
// 0x10de, base class 0x03): a GPU the nvidia module drives.
func (d PCIDevice) NVIDIADisplay() bool {
	return d.Vendor == PCIVendorNVIDIA && d.Class>>16 == pciBaseClassDisplay
}

// PCIDevices reads every PCI function under <sysRoot>/bus/pci/devices,
// in directory order. A function whose vendor or class cannot be read is
// an error, as is a missing directory (no sysfs: the caller cannot tell
// whether a GPU is there).
func PCIDevices(sysRoot string) ([]PCIDevice, error) {
	dir := filepath.Join(sysRoot, "bus/pci/devices")
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("listing PCI devices: %w", err)
	}
	out := make([]PCIDevice, 0, len(ents))
	for _, e := range ents {
		d, err := readPCIDevice(filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		d.BusID = e.Name()
		out = append(out, d)
	}
	return out, nil
}

func readPCIDevice(dir string) (PCIDevice, error) {
	var d PCIDevice
	var vendor, device uint64
	var err error
	if vendor, err = readHexAttr(dir, "vendor", 16); err != nil {
		return d, err
	}
	if device, err = readHexAttr(dir, "device", 16); err != nil {
		return d, err
	}
	class, err := readHexAttr(dir, "class", 24)
	if err != nil {
		return d, err
	}
	return PCIDevice{Vendor: uint16(vendor), Device: uint16(device), Class: uint32(class)}, nil
}

// readHexAttr reads a sysfs attribute holding one hexadecimal number
// ("0x10de\n") of at most bits bits.
func readHexAttr(dir, name string, bits int) (uint64, error) {
	p := filepath.Join(dir, name)
	data, err := os.ReadFile(p)
	if err != nil {
		return 0, fmt.Errorf("reading PCI attribute: %w", err)
	}
	s := strings.TrimPrefix(strings.TrimSpace(string(data)), "0x")
	v, err := strconv.ParseUint(s, 16, bits)
	if err != nil {
		return 0, fmt.Errorf("%w: PCI attribute %s: %q is not a %d-bit hex number", ErrInvalid, p, data, bits)
	}
	return v, nil
}

// nvidiaDisplayPresent says whether sysfs lists an NVIDIA display
// controller; err is set when sysfs could not be enumerated, and then
// nvidia-modprobe runs modprobe anyway.
func nvidiaDisplayPresent(sysRoot string) (bool, error) {
	devs, err := PCIDevices(sysRoot)
	if err != nil {
		return false, err
	}
	for _, d := range devs {
		if d.NVIDIADisplay() {
			return true, nil
		}
	}
	return false, nil
}
