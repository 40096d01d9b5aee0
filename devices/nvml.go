package devices

import (
	"fmt"
	"math"
	"strings"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

// nvmlInitError is an NVML Init failure; it matches ErrNVMLUnavailable and
// the nvml.Return.
type nvmlInitError struct{ ret nvml.Return }

func (e *nvmlInitError) Error() string {
	return fmt.Sprintf("%v: initialising NVML: %v", ErrNVMLUnavailable, e.ret)
}

func (e *nvmlInitError) Is(target error) bool {
	return target == ErrNVMLUnavailable || target == e.ret
}

// discoverNVML fills h from NVML, between Init and Shutdown.
func discoverNVML(h *Host, lib nvml.Interface, f *procFacts) (err error) {
	if ret := lib.Init(); ret != nvml.SUCCESS {
		return &nvmlInitError{ret}
	}
	defer func() {
		if ret := lib.Shutdown(); ret != nvml.SUCCESS && err == nil {
			err = fmt.Errorf("shutting NVML down: %w", ret)
		}
	}()
	if err := nvmlVersions(h, lib); err != nil {
		return err
	}
	n, ret := lib.DeviceGetCount()
	if ret != nvml.SUCCESS {
		return fmt.Errorf("counting GPUs: %w", ret)
	}
	h.GPUs = make([]GPU, n)
	for i := range h.GPUs {
		if err := nvmlGPU(lib, i, &h.GPUs[i], f); err != nil {
			return fmt.Errorf("querying GPU %d: %w", i, err)
		}
	}
	return nil
}

func nvmlVersions(h *Host, lib nvml.Interface) error {
	var ret nvml.Return
	if h.DriverVersion, ret = lib.SystemGetDriverVersion(); ret != nvml.SUCCESS {
		return fmt.Errorf("getting driver version: %w", ret)
	}
	cuda, ret := lib.SystemGetCudaDriverVersion()
	if ret != nvml.SUCCESS {
		return fmt.Errorf("getting CUDA version: %w", ret)
	}
	h.CUDAVersion = fmt.Sprintf("%d.%d", cuda/1000, cuda%1000/10) // NVML: major*1000 + minor*10
	return nil
}

// query collects the first failed NVML call.
type query struct{ err error }

func (q *query) ok(what string, ret nvml.Return) bool {
	if q.err == nil && ret != nvml.SUCCESS {
		q.err = fmt.Errorf("getting %s: %w", what, ret)
	}
	return q.err == nil
}

func nvmlGPU(lib nvml.Interface, i int, g *GPU, f *procFacts) error {
	d, ret := lib.DeviceGetHandleByIndex(i)
	if ret != nvml.SUCCESS {
		return fmt.Errorf("getting handle: %w", ret)
	}
	g.Index = i
	var q query
	minor, ret := d.GetMinorNumber()
	q.ok("minor number", ret)
	g.Minor = uint32(minor)
	g.UUID, ret = d.GetUUID()
	q.ok("UUID", ret)
	pci, ret := d.GetPciInfo()
	q.ok("PCI info", ret)
	g.BusID = formatBusID(pci.Domain, pci.Bus, pci.Device)
	g.Model, ret = d.GetName()
	q.ok("name", ret)
	nvmlDescribe(d, g, &q)
	if q.err != nil {
		return q.err
	}
	if err := nvmlMIG(d, g); err != nil {
		return err
	}
	f.fillGPU(g, pci.Domain, pci.Bus, pci.Device)
	return nil
}

// nvmlDescribe sets brand, architecture and compute capability. An
// architecture NVML does not support (old drivers) stays empty.
func nvmlDescribe(d nvml.Device, g *GPU, q *query) {
	brand, ret := d.GetBrand()
	q.ok("brand", ret)
	g.Brand = brandName(brand)
	arch, ret := d.GetArchitecture()
	if ret != nvml.ERROR_NOT_SUPPORTED && ret != nvml.ERROR_FUNCTION_NOT_FOUND {
		q.ok("architecture", ret)
		g.Architecture = archName(arch)
	}
	major, minor, ret := d.GetCudaComputeCapability()
	q.ok("compute capability", ret)
	g.ComputeCapability = fmt.Sprintf("%d.%d", major, minor)
}

// nvmlMIG sets the MIG mode and, when MIG is on, lists the MIG devices as
// libnvidia-container does: handles 0, 1, … up to the first missing one.
func nvmlMIG(d nvml.Device, g *GPU) error {
	cur, pending, ret := d.GetMigMode()
	switch ret {
	case nvml.SUCCESS:
		g.MIGCapable = true
		g.MIGEnabled = cur == nvml.DEVICE_MIG_ENABLE && cur == pending
	case nvml.ERROR_NOT_SUPPORTED, nvml.ERROR_FUNCTION_NOT_FOUND:
		return nil
	default:
		return fmt.Errorf("getting MIG mode: %w", ret)
	}
	if !g.MIGEnabled {
		return nil
	}
	n, ret := d.GetMaxMigDeviceCount()
	if ret != nvml.SUCCESS {
		return fmt.Errorf("getting MIG device count: %w", ret)
	}
	for k := range n {
		h, ret := d.GetMigDeviceHandleByIndex(k)
		if ret == nvml.ERROR_NOT_FOUND {
			break
		}
		m, err := nvmlMIGDevice(h, ret)
		if err != nil {
			return fmt.Errorf("MIG device %d: %w", k, err)
		}
		g.MIGDevices = append(g.MIGDevices, m)
	}
	return nil
}

func nvmlMIGDevice(h nvml.Device, ret nvml.Return) (MIGDevice, error) {
	var m MIGDevice
	q := query{}
	q.ok("handle", ret)
	if q.err != nil {
		return m, q.err
	}
	m.GI, ret = h.GetGpuInstanceId()
	q.ok("GPU instance id", ret)
	m.CI, ret = h.GetComputeInstanceId()
	q.ok("compute instance id", ret)
	m.UUID, ret = h.GetUUID()
	q.ok("UUID", ret)
	m.Profile = migProfile(h)
	return m, q.err
}

// migProfile is the profile NVML names a MIG device by: its name ends in
// "MIG 3g.20gb". Lacking that, it is rebuilt from the device's attributes
// (slices and memory, without media-engine suffixes); empty when NVML says
// neither.
func migProfile(h nvml.Device) string {
	if name, ret := h.GetName(); ret == nvml.SUCCESS {
		if i := strings.LastIndex(name, " MIG "); i >= 0 {
			return name[i+len(" MIG "):]
		}
	}
	a, ret := h.GetAttributes()
	if ret != nvml.SUCCESS || a.GpuInstanceSliceCount == 0 {
		return ""
	}
	gb := uint64(math.Round(float64(a.MemorySizeMB) / 1024))
	p := fmt.Sprintf("%dg.%dgb", a.GpuInstanceSliceCount, gb)
	if a.ComputeInstanceSliceCount != a.GpuInstanceSliceCount {
		p = fmt.Sprintf("%dc.%s", a.ComputeInstanceSliceCount, p)
	}
	return p
}

var brandNames = map[nvml.BrandType]string{
	nvml.BRAND_QUADRO: "Quadro", nvml.BRAND_TESLA: "Tesla", nvml.BRAND_NVS: "NVS",
	nvml.BRAND_GRID: "GRID", nvml.BRAND_GEFORCE: "GeForce", nvml.BRAND_TITAN: "TITAN",
	nvml.BRAND_NVIDIA_VAPPS: "VApps", nvml.BRAND_NVIDIA_VPC: "VPC", nvml.BRAND_NVIDIA_VCS: "VCS",
	nvml.BRAND_NVIDIA_VWS: "VWS", nvml.BRAND_NVIDIA_CLOUD_GAMING: "CloudGaming",
	nvml.BRAND_QUADRO_RTX: "QuadroRTX", nvml.BRAND_NVIDIA_RTX: "NvidiaRTX", nvml.BRAND_NVIDIA: "Nvidia",
	nvml.BRAND_GEFORCE_RTX: "GeForceRTX", nvml.BRAND_TITAN_RTX: "TitanRTX",
}

// brandName is the brand string libnvidia-container prints and matches
// "brand=" requirements against.
func brandName(b nvml.BrandType) string {
	if n, ok := brandNames[b]; ok {
		return n
	}
	return "Unknown"
}

var archNames = map[nvml.DeviceArchitecture]string{
	nvml.DEVICE_ARCH_KEPLER: "Kepler", nvml.DEVICE_ARCH_MAXWELL: "Maxwell",
	nvml.DEVICE_ARCH_PASCAL: "Pascal", nvml.DEVICE_ARCH_VOLTA: "Volta",
	nvml.DEVICE_ARCH_TURING: "Turing", nvml.DEVICE_ARCH_AMPERE: "Ampere",
	nvml.DEVICE_ARCH_ADA: "Ada", nvml.DEVICE_ARCH_HOPPER: "Hopper",
	nvml.DEVICE_ARCH_BLACKWELL: "Blackwell", nvml.DEVICE_ARCH_RUBIN: "Rubin",
}

func archName(a nvml.DeviceArchitecture) string {
	if n, ok := archNames[a]; ok {
		return n
	}
	return "Unknown"
}
