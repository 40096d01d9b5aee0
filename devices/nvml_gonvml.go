//go:build cgo

package devices

import (
	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

// NewNVMLFromGoNVML returns lib, a go-nvml nvml.Interface (nvml.New(), or
// one of go-nvml's mocks), as the NVMLInterface Discover and package driver
// take. Its errors wrap the nvml.Return (errors.Is(err,
// nvml.ERROR_DRIVER_NOT_LOADED) holds) and match ErrNVMLNotSupported and
// ErrNVMLNotFound where they apply. It needs cgo, as go-nvml does.
func NewNVMLFromGoNVML(lib nvml.Interface) NVMLInterface {
	return goNVML{lib}
}

// nvmlError is a failed go-nvml call: its text is the Return's.
type nvmlError struct{ ret nvml.Return }

func (e *nvmlError) Error() string { return e.ret.Error() }

func (e *nvmlError) Unwrap() []error {
	switch e.ret {
	case nvml.ERROR_NOT_SUPPORTED, nvml.ERROR_FUNCTION_NOT_FOUND:
		return []error{e.ret, ErrNVMLNotSupported}
	case nvml.ERROR_NOT_FOUND:
		return []error{e.ret, ErrNVMLNotFound}
	}
	return []error{e.ret}
}

func nvmlErr(ret nvml.Return) error {
	if ret == nvml.SUCCESS {
		return nil
	}
	return &nvmlError{ret}
}

type goNVML struct{ lib nvml.Interface }

func (n goNVML) Init() error     { return nvmlErr(n.lib.Init()) }
func (n goNVML) Shutdown() error { return nvmlErr(n.lib.Shutdown()) }

func (n goNVML) SystemDriverVersion() (string, error) {
	v, ret := n.lib.SystemGetDriverVersion()
	return v, nvmlErr(ret)
}

func (n goNVML) SystemCUDADriverVersion() (int, error) {
	v, ret := n.lib.SystemGetCudaDriverVersion()
	return v, nvmlErr(ret)
}

func (n goNVML) DeviceCount() (int, error) {
	c, ret := n.lib.DeviceGetCount()
	return c, nvmlErr(ret)
}

func (n goNVML) DeviceByIndex(i int) (NVMLDevice, error) {
	d, ret := n.lib.DeviceGetHandleByIndex(i)
	if ret != nvml.SUCCESS {
		return nil, nvmlErr(ret)
	}
	return goDevice{d}, nil
}

type goDevice struct{ d nvml.Device }

func (g goDevice) MinorNumber() (int, error) {
	m, ret := g.d.GetMinorNumber()
	return m, nvmlErr(ret)
}

func (g goDevice) UUID() (string, error) {
	u, ret := g.d.GetUUID()
	return u, nvmlErr(ret)
}

func (g goDevice) PCIInfo() (PCIAddress, error) {
	p, ret := g.d.GetPciInfo()
	return PCIAddress{Domain: p.Domain, Bus: p.Bus, Device: p.Device}, nvmlErr(ret)
}

func (g goDevice) Name() (string, error) {
	s, ret := g.d.GetName()
	return s, nvmlErr(ret)
}

func (g goDevice) Brand() (string, error) {
	b, ret := g.d.GetBrand()
	return brandName(b), nvmlErr(ret)
}

func (g goDevice) Architecture() (string, error) {
	a, ret := g.d.GetArchitecture()
	return archName(a), nvmlErr(ret)
}

func (g goDevice) CUDAComputeCapability() (int, int, error) {
	major, minor, ret := g.d.GetCudaComputeCapability()
	return major, minor, nvmlErr(ret)
}

func (g goDevice) MIGMode() (bool, bool, error) {
	cur, pending, ret := g.d.GetMigMode()
	return cur == nvml.DEVICE_MIG_ENABLE, pending == nvml.DEVICE_MIG_ENABLE, nvmlErr(ret)
}

func (g goDevice) MaxMIGDeviceCount() (int, error) {
	n, ret := g.d.GetMaxMigDeviceCount()
	return n, nvmlErr(ret)
}

func (g goDevice) MIGDeviceByIndex(i int) (NVMLDevice, error) {
	h, ret := g.d.GetMigDeviceHandleByIndex(i)
	if ret != nvml.SUCCESS {
		return nil, nvmlErr(ret)
	}
	return goDevice{h}, nil
}

func (g goDevice) GPUInstanceID() (int, error) {
	id, ret := g.d.GetGpuInstanceId()
	return id, nvmlErr(ret)
}

func (g goDevice) ComputeInstanceID() (int, error) {
	id, ret := g.d.GetComputeInstanceId()
	return id, nvmlErr(ret)
}

func (g goDevice) Attributes() (NVMLAttributes, error) {
	a, ret := g.d.GetAttributes()
	return NVMLAttributes{
		GPUInstanceSliceCount:     a.GpuInstanceSliceCount,
		ComputeInstanceSliceCount: a.ComputeInstanceSliceCount,
		MemorySizeMB:              a.MemorySizeMB,
	}, nvmlErr(ret)
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
