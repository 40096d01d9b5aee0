//go:build cgo

package nvmlmock

import (
	"fmt"

	"github.com/google/uuid"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/server"
)

// uuidSpace is the name space of the UUIDs the mocks hand out (UUID v5 over
// "<machine>/gpu<i>[/gi<g>/ci<c>]").
var uuidSpace = uuid.MustParse("2f1d6c8e-5b7a-4c2e-9a43-6e0d9b1c7a10")

// GPUUUID is the UUID New gives GPU index i of machine.
func GPUUUID(machine string, i int) string {
	return "GPU-" + uuid.NewSHA1(uuidSpace, fmt.Appendf(nil, "%s/gpu%d", machine, i)).String()
}

// MIGUUID is the UUID New gives the MIG device with GPU instance gi and
// compute instance ci on GPU index i of machine.
func MIGUUID(machine string, i, gi, ci int) string {
	name := fmt.Appendf(nil, "%s/gpu%d/gi%d/ci%d", machine, i, gi, ci)
	return "MIG-" + uuid.NewSHA1(uuidSpace, name).String()
}

// wireDevice gives GPU index i its stable UUID and its PCI address, and
// answers the MIG handle calls for a GPU without MIG devices.
func wireDevice(d *server.Device, machine string, i int, buses []uint32) {
	bus := busFor(buses, i)
	d.UUID = GPUUUID(machine, i)
	d.PciBusID = fmt.Sprintf("%08X:%02X:00.0", 0, bus)
	pci := pciInfo(d.Config.PciDeviceId, bus)
	d.GetPciInfoFunc = func() (nvml.PciInfo, nvml.Return) { return pci, nvml.SUCCESS }
	d.IsMigDeviceHandleFunc = func() (bool, nvml.Return) { return false, nvml.SUCCESS }
	limit := maxMIGDevices(d)
	d.GetMaxMigDeviceCountFunc = func() (int, nvml.Return) { return limit, nvml.SUCCESS }
	wireMIGHandles(d, nil, limit)
}

// busFor returns the bus of slot i; slots past the board's get buses after
// its last one.
func busFor(buses []uint32, i int) uint32 {
	if i < len(buses) {
		return buses[i]
	}
	return buses[len(buses)-1] + uint32(i-len(buses)+1)
}

// pciInfo is what NVML reports for a GPU at 0000:<bus>:00.0: the bus id in
// NVML's 8-digit-domain form and the legacy 4-digit form, both upper case.
func pciInfo(deviceID, bus uint32) nvml.PciInfo {
	p := nvml.PciInfo{Domain: 0, Bus: bus, Device: 0, PciDeviceId: deviceID}
	copyCString(p.BusId[:], fmt.Sprintf("%08X:%02X:%02X.0", 0, bus, 0))
	copyCString(p.BusIdLegacy[:], fmt.Sprintf("%04X:%02X:%02X.0", 0, bus, 0))
	return p
}

func copyCString(dst []int8, s string) {
	for i := 0; i < len(s) && i < len(dst)-1; i++ {
		dst[i] = int8(s[i])
	}
}

// handleByBusID finds a GPU by PCI bus id in any of the forms NVML accepts
// ("0000:07:00.0", "00000000:07:00.0", any case).
func handleByBusID(s *server.Server, id string) (nvml.Device, nvml.Return) {
	var dom, bus, dev, fn uint32
	if n, _ := fmt.Sscanf(id, "%x:%x:%x.%x", &dom, &bus, &dev, &fn); n != 4 {
		return nil, nvml.ERROR_INVALID_ARGUMENT
	}
	for _, d := range s.Devices {
		p, _ := d.GetPciInfo()
		if p.Domain == dom && p.Bus == bus && p.Device == dev && fn == 0 {
			return d, nvml.SUCCESS
		}
	}
	return nil, nvml.ERROR_NOT_FOUND
}

// maxMIGDevices is the most MIG devices the GPU can hold: the instance
// count of its smallest GPU instance profile.
func maxMIGDevices(d *server.Device) int {
	n := 0
	for _, p := range d.Config.MIGProfiles.GpuInstanceProfiles {
		n = max(n, int(p.InstanceCount))
	}
	return n
}

// wireMIGHandles answers GetMigDeviceHandleByIndex from handles: an index
// below the maximum with no device is NOT_FOUND, as in NVML.
func wireMIGHandles(d *server.Device, handles []nvml.Device, limit int) {
	d.GetMigDeviceHandleByIndexFunc = func(i int) (nvml.Device, nvml.Return) {
		switch {
		case i >= 0 && i < len(handles):
			return handles[i], nvml.SUCCESS
		case i >= 0 && i < limit:
			return nil, nvml.ERROR_NOT_FOUND
		}
		return nil, nvml.ERROR_INVALID_ARGUMENT
	}
}
