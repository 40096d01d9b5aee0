package devices

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Selection is a set of devices picked by ID, in the order they were
// picked. Selecting a MIG device also selects its parent GPU.
type Selection struct {
	// All is set when the IDs were (or began with) "all".
	All bool `json:"all"`
	// GPUs are the selected GPUs, parents of selected MIG devices included.
	GPUs []GPU `json:"gpus"`
	// MIGDevices are the selected MIG devices.
	MIGDevices []MIGDevice `json:"migDevices,omitempty"`
}

// DeviceIDError is a device ID that a selection refused. It matches
// ErrUnknownDevice for an ID that names no device and ErrInvalid for one
// that is not allowed where it was given.
type DeviceIDError struct {
	// ID is the refused ID, as given.
	ID string
	// Reason is libnvidia-container's wording, e.g. "unknown device".
	Reason string
	// Err is ErrUnknownDevice or ErrInvalid.
	Err error
}

func (e *DeviceIDError) Error() string { return e.Reason + ": " + e.ID }

// Unwrap returns e.Err.
func (e *DeviceIDError) Unwrap() error { return e.Err }

// Select picks devices by a comma-separated list of IDs, in
// libnvidia-container's syntax (empty entries are skipped, spaces around
// entries ignored), each tried in this order:
//
//   - "all" (any case): every GPU and MIG device; later entries are ignored;
//   - a GPU UUID, "GPU-…" (any case);
//   - a PCI bus id, "domain:bus:device[.function]" in hex with short fields
//     allowed ("0:7:0.0" is 00000000:07:00.0);
//   - a GPU index, decimal;
//   - a MIG device UUID, "MIG-…" (any case);
//   - "gpu:mig", a GPU index and the index of a MIG device on it.
//
// Anything else fails with a *DeviceIDError matching ErrUnknownDevice.
// A host without GPUs selects nothing and rejects nothing, as
// libnvidia-container skips selection when NVML reports no GPU.
func (h *Host) Select(ids string) (*Selection, error) {
	s := &Selection{}
	if len(h.GPUs) == 0 {
		return s, nil
	}
	for _, id := range splitIDs(ids) {
		if strings.EqualFold(id, "all") {
			h.selectAll(s)
			break
		}
		if g, ok := h.findGPU(id); ok {
			s.addGPU(g)
		} else if m, ok := h.findMIG(id); ok {
			s.addMIG(m)
			s.addGPU(h.GPUs[m.Parent])
		} else {
			return nil, &DeviceIDError{ID: id, Reason: "unknown device", Err: ErrUnknownDevice}
		}
	}
	return s, nil
}

func splitIDs(ids string) []string {
	var out []string
	for id := range strings.SplitSeq(ids, ",") {
		if id = strings.TrimSpace(id); id != "" {
			out = append(out, id)
		}
	}
	return out
}

func (h *Host) selectAll(s *Selection) {
	s.All = true
	for _, g := range h.GPUs {
		s.addGPU(g)
	}
	for _, g := range h.GPUs {
		for _, m := range g.MIGDevices {
			s.addMIG(m)
		}
	}
}

func (h *Host) findGPU(id string) (GPU, bool) {
	for _, g := range h.GPUs {
		if hasPrefixFold(id, "GPU-") && strings.EqualFold(g.UUID, id) {
			return g, true
		}
	}
	if bus, ok := normalizeBusID(id); ok {
		for _, g := range h.GPUs {
			if strings.EqualFold(g.BusID, bus) {
				return g, true
			}
		}
	}
	if n, ok := decimal(id); ok && n < len(h.GPUs) {
		return h.GPUs[n], true
	}
	return GPU{}, false
}

func (h *Host) findMIG(id string) (MIGDevice, bool) {
	if hasPrefixFold(id, "MIG-") {
		for _, g := range h.GPUs {
			for _, m := range g.MIGDevices {
				if strings.EqualFold(m.UUID, id) {
					return m, true
				}
			}
		}
	}
	gs, ms, ok := strings.Cut(id, ":")
	gi, ok1 := decimal(gs)
	mi, ok2 := decimal(ms)
	if ok && ok1 && ok2 && gi < len(h.GPUs) && mi < len(h.GPUs[gi].MIGDevices) {
		return h.GPUs[gi].MIGDevices[mi], true
	}
	return MIGDevice{}, false
}

func hasPrefixFold(s, prefix string) bool {
	return len(s) > len(prefix) && strings.EqualFold(s[:len(prefix)], prefix)
}

// decimal parses a non-negative decimal made of digits only.
func decimal(s string) (int, bool) {
	n, ok := digits(s, math.MaxInt)
	return int(n), ok
}

// normalizeBusID turns a PCI bus id in any accepted short form into
// %08x:%02x:%02x.0. Bus and device take at most two hex digits each, as in
// libnvidia-container's "%x:%02x:%02x.0" scan; the function is ignored.
func normalizeBusID(id string) (string, bool) {
	dom, rest, ok1 := strings.Cut(id, ":")
	bus, rest, ok2 := strings.Cut(rest, ":")
	dev, _, _ := strings.Cut(rest, ".")
	if !ok1 || !ok2 || len(bus) > 2 || len(dev) > 2 {
		return "", false
	}
	d, err1 := strconv.ParseUint(dom, 16, 32)
	b, err2 := strconv.ParseUint(bus, 16, 8)
	v, err3 := strconv.ParseUint(dev, 16, 8)
	if err1 != nil || err2 != nil || err3 != nil {
		return "", false
	}
	return formatBusID(uint32(d), uint32(b), uint32(v)), true
}

func (s *Selection) addGPU(g GPU) {
	for _, have := range s.GPUs {
		if have.Index == g.Index {
			return
		}
	}
	s.GPUs = append(s.GPUs, g)
}

func (s *Selection) addMIG(m MIGDevice) {
	for _, have := range s.MIGDevices {
		if have.Parent == m.Parent && have.Index == m.Index {
			return
		}
	}
	s.MIGDevices = append(s.MIGDevices, m)
}

// SelectMIGConfig picks the GPUs whose MIG configuration capability a
// container gets (--mig-config, NVIDIA_MIG_CONFIG_DEVICES) among visible,
// the Selection of its devices. Only "all" is accepted: it selects every
// MIG-capable visible GPU and the parents of visible MIG devices, and is
// refused when visible holds specific MIG devices without being "all".
func (h *Host) SelectMIGConfig(ids string, visible *Selection) (*Selection, error) {
	return h.selectMIGAccess("mig-config", ids, visible)
}

// SelectMIGMonitor is SelectMIGConfig for the MIG monitor capability
// (--mig-monitor, NVIDIA_MIG_MONITOR_DEVICES).
func (h *Host) SelectMIGMonitor(ids string, visible *Selection) (*Selection, error) {
	return h.selectMIGAccess("mig-monitor", ids, visible)
}

func (h *Host) selectMIGAccess(kind, ids string, visible *Selection) (*Selection, error) {
	s := &Selection{}
	for _, id := range splitIDs(ids) {
		if !strings.EqualFold(id, "all") {
			return nil, &DeviceIDError{ID: id, Reason: "only 'all' devices are currently supported", Err: ErrInvalid}
		}
		if !visible.All && len(visible.MIGDevices) > 0 {
			reason := fmt.Sprintf("cannot enable %s with specific MIG devices selected", kind)
			return nil, &DeviceIDError{ID: id, Reason: reason, Err: ErrInvalid}
		}
		for _, g := range visible.GPUs {
			if g.MIGCapable {
				s.addGPU(g)
			}
		}
		for _, m := range visible.MIGDevices {
			if p := h.GPUs[m.Parent]; p.MIGCapable {
				s.addGPU(p)
			}
		}
		s.All = true
		break
	}
	return s, nil
}
