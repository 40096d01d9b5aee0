package fakehost

import (
	"fmt"

	"errors"

	"github.com/go-nvc/nvc/devices"
	"github.com/go-nvc/nvc/internal/fakenvml"
	"github.com/go-nvc/nvc/internal/fstree"
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
	arch             string // NVML's name: "Ampere", "Hopper", …
	migCapable       bool
	migs             []migFacts
	procName         string // gpus/ directory name: 0000:07:00.0
}

// migFacts is one MIG device: its GPU and compute instance ids.
type migFacts struct{ gi, ci int }

// defaultNVML returns the fake NVML of o.Machine.
func defaultNVML(o Options) (devices.NVMLInterface, error) {
	return fakenvml.New(o.Machine, &fakenvml.Options{DriverVersion: o.DriverVersion, MIG: o.MIG})
}

// writeGPUs writes the procfs and dev trees for h.NVML.
func writeGPUs(h *Host, o Options) error {
	gpus, err := readGPUs(h.NVML)
	if err != nil {
		return err
	}
	entries := procEntries(h.DriverVersion, gpus)
	entries = append(entries, devEntries(gpus, imexCount(o.IMEXChannels))...)
	entries = append(entries, sysEntries(gpus)...)
	entries = append(entries, driEntries(gpus)...)
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
func readGPUs(lib devices.NVMLInterface) ([]gpuFacts, error) {
	if err := lib.Init(); err != nil {
		return nil, fmt.Errorf("initialising NVML: %v", err)
	}
	defer lib.Shutdown()
	n, err := lib.DeviceCount()
	if err != nil {
		return nil, fmt.Errorf("counting GPUs: %v", err)
	}
	gpus := make([]gpuFacts, n)
	buses := map[string]int{}
	for i := range gpus {
		if err := readGPU(lib, i, &gpus[i]); err != nil {
			return nil, fmt.Errorf("reading GPU %d: %w", i, err)
		}
		if j, dup := buses[gpus[i].procName]; dup {
			return nil, fmt.Errorf("GPUs %d and %d share PCI bus id %s (wire bus ids, e.g. with fakenvml)", j, i, gpus[i].procName)
		}
		buses[gpus[i].procName] = i
	}
	return gpus, nil
}

func readGPU(lib devices.NVMLInterface, i int, g *gpuFacts) error {
	d, err := lib.DeviceByIndex(i)
	if err != nil {
		return fmt.Errorf("getting handle: %v", err)
	}
	g.index = i
	var errs [4]error
	g.minor, errs[0] = d.MinorNumber()
	g.uuid, errs[1] = d.UUID()
	g.name, errs[2] = d.Name()
	pci, err := d.PCIInfo()
	errs[3] = err
	for _, err := range errs {
		if err != nil {
			return fmt.Errorf("querying minor, UUID, name and PCI info: %v", err)
		}
	}
	g.domain, g.bus, g.dev = pci.Domain, pci.Bus, pci.Device
	g.procName = fmt.Sprintf("%04x:%02x:%02x.0", g.domain, g.bus, g.dev)
	g.arch, _ = d.Architecture()
	return readMIG(d, g)
}

// readMIG records whether the GPU can do MIG and, when MIG is on, its MIG
// devices.
func readMIG(d devices.NVMLDevice, g *gpuFacts) error {
	cur, _, err := d.MIGMode()
	g.migCapable = err == nil
	if !g.migCapable || !cur {
		return nil
	}
	n, err := d.MaxMIGDeviceCount()
	if err != nil {
		return fmt.Errorf("counting MIG devices: %v", err)
	}
	for k := range n {
		m, err := d.MIGDeviceByIndex(k)
		if errors.Is(err, devices.ErrNVMLNotFound) {
			continue
		}
		if err != nil {
			return fmt.Errorf("getting MIG device %d: %v", k, err)
		}
		gi, err1 := m.GPUInstanceID()
		ci, err2 := m.ComputeInstanceID()
		if err1 != nil || err2 != nil {
			return fmt.Errorf("MIG device %d instance ids: %v, %v", k, err1, err2)
		}
		g.migs = append(g.migs, migFacts{gi, ci})
	}
	return nil
}
