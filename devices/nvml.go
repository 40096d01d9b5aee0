package devices

import (
	"errors"
	"fmt"
	"math"
	"strings"
)

// discoverNVML fills h from NVML, between Init and Shutdown, and then
// hands lib to withNVML (Options.WithNVML) when set.
func discoverNVML(h *Host, lib NVMLInterface, f *procFacts, withNVML func(NVMLInterface) error) (err error) {
	if err := lib.Init(); err != nil {
		return fmt.Errorf("%w: initialising NVML: %w", ErrNVMLUnavailable, err)
	}
	defer func() {
		if serr := lib.Shutdown(); serr != nil && err == nil {
			err = fmt.Errorf("shutting NVML down: %w", serr)
		}
	}()
	n, err := lib.DeviceCount()
	if err != nil {
		return fmt.Errorf("counting GPUs: %w", err)
	}
	h.GPUs = make([]GPU, n)
	for i := range h.GPUs {
		if err := nvmlGPU(lib, i, &h.GPUs[i], f); err != nil {
			return fmt.Errorf("querying GPU %d: %w", i, err)
		}
	}
	if withNVML != nil {
		return withNVML(lib)
	}
	return nil
}

// query collects the first failed NVML call.
type query struct{ err error }

func (q *query) ok(what string, err error) bool {
	if q.err == nil && err != nil {
		q.err = fmt.Errorf("getting %s: %w", what, err)
	}
	return q.err == nil
}

func nvmlGPU(lib NVMLInterface, i int, g *GPU, f *procFacts) error {
	d, err := lib.DeviceByIndex(i)
	if err != nil {
		return fmt.Errorf("getting handle: %w", err)
	}
	g.Index = i
	var q query
	minor, err := d.MinorNumber()
	q.ok("minor number", err)
	g.Minor = uint32(minor)
	g.UUID, err = d.UUID()
	q.ok("UUID", err)
	pci, err := d.PCIInfo()
	q.ok("PCI info", err)
	g.BusID = formatBusID(pci.Domain, pci.Bus, pci.Device)
	g.Model, err = d.Name()
	q.ok("name", err)
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
func nvmlDescribe(d NVMLDevice, g *GPU, q *query) {
	var err error
	g.Brand, err = d.Brand()
	q.ok("brand", err)
	arch, err := d.Architecture()
	if !errors.Is(err, ErrNVMLNotSupported) {
		q.ok("architecture", err)
		g.Architecture = arch
	}
	major, minor, err := d.CUDAComputeCapability()
	q.ok("compute capability", err)
	g.ComputeCapability = fmt.Sprintf("%d.%d", major, minor)
}

// nvmlMIG sets the MIG mode and, when MIG is on, lists the MIG devices as
// libnvidia-container does: handles 0, 1, … up to the first missing one.
func nvmlMIG(d NVMLDevice, g *GPU) error {
	cur, pending, err := d.MIGMode()
	switch {
	case err == nil:
		g.MIGCapable = true
		g.MIGEnabled = cur && pending
	case errors.Is(err, ErrNVMLNotSupported):
		return nil
	default:
		return fmt.Errorf("getting MIG mode: %w", err)
	}
	if !g.MIGEnabled {
		return nil
	}
	n, err := d.MaxMIGDeviceCount()
	if err != nil {
		return fmt.Errorf("getting MIG device count: %w", err)
	}
	for k := range n {
		h, err := d.MIGDeviceByIndex(k)
		if errors.Is(err, ErrNVMLNotFound) {
			break
		}
		m, err := nvmlMIGDevice(h, err)
		if err != nil {
			return fmt.Errorf("MIG device %d: %w", k, err)
		}
		g.MIGDevices = append(g.MIGDevices, m)
	}
	return nil
}

func nvmlMIGDevice(h NVMLDevice, err error) (MIGDevice, error) {
	var m MIGDevice
	q := query{}
	q.ok("handle", err)
	if q.err != nil {
		return m, q.err
	}
	m.GI, err = h.GPUInstanceID()
	q.ok("GPU instance id", err)
	m.CI, err = h.ComputeInstanceID()
	q.ok("compute instance id", err)
	m.UUID, err = h.UUID()
	q.ok("UUID", err)
	m.Profile = migProfile(h)
	return m, q.err
}

// migProfile is the profile NVML names a MIG device by: its name ends in
// "MIG 3g.20gb". Lacking that, it is rebuilt from the device's attributes
// (slices and memory, without media-engine suffixes); empty when NVML says
// neither.
func migProfile(h NVMLDevice) string {
	if name, err := h.Name(); err == nil {
		if i := strings.LastIndex(name, " MIG "); i >= 0 {
			return name[i+len(" MIG "):]
		}
	}
	a, err := h.Attributes()
	if err != nil || a.GPUInstanceSliceCount == 0 {
		return ""
	}
	gb := uint64(math.Round(float64(a.MemorySizeMB) / 1024))
	p := fmt.Sprintf("%dg.%dgb", a.GPUInstanceSliceCount, gb)
	if a.ComputeInstanceSliceCount != a.GPUInstanceSliceCount {
		p = fmt.Sprintf("%dc.%s", a.ComputeInstanceSliceCount, p)
	}
	return p
}
