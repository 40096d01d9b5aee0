package fakehost

import (
	"fmt"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/go-nvc/nvc/internal/fstree"
	"github.com/go-nvc/nvc/internal/nvmlmock"
)

// Character device majors of the generated host. The nvidia driver's major
// is fixed; the others are dynamic on a real host, and these are values seen
// on one.
const (
	MajorNvidia = 195 // /dev/nvidia*, nvidiactl (255), nvidia-modeset (254)
	MajorIMEX   = 234 // nvidia-caps-imex-channels
	MajorUVM    = 510 // nvidia-uvm (0), nvidia-uvm-tools (1)
	MajorCaps   = 511 // nvidia-caps
)

// gpuFacts is what the procfs and dev trees say about one GPU; all of it
// comes from NVML, so the trees and NVML cannot disagree.
type gpuFacts struct {
	index, minor     int
	uuid, name       string
	domain, bus, dev uint32
	arch             nvml.DeviceArchitecture
	migCapable       bool
	migs             []migFacts
	procName         string // gpus/ directory name: 0000:07:00.0
}

// migFacts is one MIG device: its GPU and compute instance ids.
type migFacts struct{ gi, ci int }

// defaultNVML returns the mock server for o.Machine.
func defaultNVML(o Options) (nvml.Interface, error) {
	return nvmlmock.New(o.Machine, &nvmlmock.Options{DriverVersion: o.DriverVersion, MIG: o.MIG})
}

// writeGPUs writes the procfs and dev trees for h.NVML.
func writeGPUs(h *Host, o Options) error {
	gpus, err := readGPUs(h.NVML)
	if err != nil {
		return err
	}
	entries := procEntries(h.DriverVersion, gpus)
	entries = append(entries, devEntries(gpus, imexCount(o.IMEXChannels))...)
	err = fstree.Build(h.Root, entries, &fstree.Options{CharAsFile: !o.RealNodes})
	if err != nil {
		return fmt.Errorf("writing GPU trees: %w", err)
	}
	return nil
}

func imexCount(n int) int {
	if n == 0 {
		return 1
	}
	return max(n, 0)
}

// readGPUs asks NVML about every GPU, between Init and Shutdown.
func readGPUs(lib nvml.Interface) ([]gpuFacts, error) {
	if ret := lib.Init(); ret != nvml.SUCCESS {
		return nil, fmt.Errorf("initialising NVML: %v", ret)
	}
	defer lib.Shutdown()
	n, ret := lib.DeviceGetCount()
	if ret != nvml.SUCCESS {
		return nil, fmt.Errorf("counting GPUs: %v", ret)
	}
	gpus := make([]gpuFacts, n)
	buses := map[string]int{}
	for i := range gpus {
		if err := readGPU(lib, i, &gpus[i]); err != nil {
			return nil, fmt.Errorf("reading GPU %d: %w", i, err)
		}
		if j, dup := buses[gpus[i].procName]; dup {
			return nil, fmt.Errorf("GPUs %d and %d share PCI bus id %s (wire bus ids, e.g. with nvmlmock)", j, i, gpus[i].procName)
		}
		buses[gpus[i].procName] = i
	}
	return gpus, nil
}

func readGPU(lib nvml.Interface, i int, g *gpuFacts) error {
	d, ret := lib.DeviceGetHandleByIndex(i)
	if ret != nvml.SUCCESS {
		return fmt.Errorf("getting handle: %v", ret)
	}
	g.index = i
	var rets [4]nvml.Return
	g.minor, rets[0] = d.GetMinorNumber()
	g.uuid, rets[1] = d.GetUUID()
	g.name, rets[2] = d.GetName()
	pci, r := d.GetPciInfo()
	rets[3] = r
	for _, r := range rets {
		if r != nvml.SUCCESS {
			return fmt.Errorf("querying minor, UUID, name and PCI info: %v", r)
		}
	}
	g.domain, g.bus, g.dev = pci.Domain, pci.Bus, pci.Device
	g.procName = fmt.Sprintf("%04x:%02x:%02x.0", g.domain, g.bus, g.dev)
	g.arch, _ = d.GetArchitecture()
	return readMIG(d, g)
}

// readMIG records whether the GPU can do MIG and, when MIG is on, its MIG
// devices.
func readMIG(d nvml.Device, g *gpuFacts) error {
	cur, _, ret := d.GetMigMode()
	g.migCapable = ret == nvml.SUCCESS
	if !g.migCapable || cur != nvml.DEVICE_MIG_ENABLE {
		return nil
	}
	n, ret := d.GetMaxMigDeviceCount()
	if ret != nvml.SUCCESS {
		return fmt.Errorf("counting MIG devices: %v", ret)
	}
	for k := range n {
		m, ret := d.GetMigDeviceHandleByIndex(k)
		if ret == nvml.ERROR_NOT_FOUND {
			continue
		}
		if ret != nvml.SUCCESS {
			return fmt.Errorf("getting MIG device %d: %v", k, ret)
		}
		gi, r1 := m.GetGpuInstanceId()
		ci, r2 := m.GetComputeInstanceId()
		if r1 != nvml.SUCCESS || r2 != nvml.SUCCESS {
			return fmt.Errorf("MIG device %d instance ids: %v, %v", k, r1, r2)
		}
		g.migs = append(g.migs, migFacts{gi, ci})
	}
	return nil
}
