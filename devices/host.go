package devices

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// fillGPU sets what both backends derive alike from a GPU whose Minor,
// MIGCapable and MIGDevices (GI, CI) are known: its node, proc directory,
// MIG capability directory and minors, and each MIG device's index, parent
// and access capabilities.
func (f *procFacts) fillGPU(g *GPU, domain, bus, device uint32) {
	g.Node = Node{Path: fmt.Sprintf("/dev/nvidia%d", g.Minor), Major: MajorNvidia, Minor: g.Minor}
	g.ProcDir = f.gpuProcDir(domain, bus, device)
	if !g.MIGCapable {
		return
	}
	g.MIGCapsDir = fmt.Sprintf("%s/gpu%d/mig", ProcCapabilities, g.Minor)
	g.MIGMinors = f.gpuMIGMinors(g.Minor)
	for k := range g.MIGDevices {
		f.fillMIGDevice(&g.MIGDevices[k], k, g)
	}
}

// gpuProcDir is the GPU's directory under /proc/driver/nvidia/gpus. Drivers
// name it with a 32-bit PCI domain (00000000:07:00.0) or a 16-bit one
// (0000:07:00.0); as libnvidia-container does, the long form is used when it
// exists and the short one otherwise.
func (f *procFacts) gpuProcDir(domain, bus, device uint32) string {
	long := fmt.Sprintf("%s/gpus/%08x:%02x:%02x.0", ProcDriver, domain, bus, device)
	if _, err := os.Stat(f.path(long)); err == nil {
		return long
	}
	return fmt.Sprintf("%s/gpus/%04x:%02x:%02x.0", ProcDriver, domain, bus, device)
}

func (f *procFacts) fillMIGDevice(m *MIGDevice, k int, g *GPU) {
	m.Index, m.Parent = k, g.Index
	gi := fmt.Sprintf("gpu%d/gi%d", g.Minor, m.GI)
	ci := fmt.Sprintf("gpu%d/gi%d/ci%d", g.Minor, m.GI, m.CI)
	m.GIAccess = f.capability(fmt.Sprintf("%s/gi%d/access", g.MIGCapsDir, m.GI), gi+"/access")
	m.CIAccess = f.capability(fmt.Sprintf("%s/gi%d/ci%d/access", g.MIGCapsDir, m.GI, m.CI), ci+"/access")
}

// capability describes the capability whose proc file is proc and whose
// mig-minors name is name. The node's minor comes from mig-minors or, when
// that lacks the name, from the proc file's DeviceFileMinor.
func (f *procFacts) capability(proc, name string) Cap {
	c := Cap{Proc: proc}
	major, ok := f.majors["nvidia-caps"]
	if !ok {
		return c
	}
	minor, ok := f.migMinors.lookup(name)
	if !ok {
		minor, ok = f.capFileMinor(proc)
	}
	if ok {
		c.Node = &Node{Path: capNodePath(minor), Major: major, Minor: minor}
	}
	return c
}

func capNodePath(minor uint32) string {
	return fmt.Sprintf("%s/nvidia-cap%d", DevNvidiaCaps, minor)
}

func (f *procFacts) capFileMinor(proc string) (uint32, bool) {
	data, err := os.ReadFile(f.path(proc))
	if err != nil {
		return 0, false
	}
	return deviceFileMinor(keyValues(data))
}

// deviceFileMinor reads a capability file's DeviceFileMinor, which it must
// have.
func deviceFileMinor(kv map[string]string) (uint32, bool) {
	s, ok := kv["DeviceFileMinor"]
	m, err := strconv.ParseUint(s, 10, 32)
	return uint32(m), ok && err == nil
}

// gpuMIGMinors lists the mig-minors entries "gpu<minor>/…", as
// libnvidia-container's setup_mig_minor_cgroups selects them.
func (f *procFacts) gpuMIGMinors(minor uint32) []uint32 {
	return f.migMinors.gpuMinors(minor)
}

// globalCap is capabilities/mig/<name>, or nil when the driver lacks it.
func (f *procFacts) globalCap(name string) *Cap {
	proc := ProcCapabilities + "/mig/" + name
	if _, err := os.Stat(f.path(proc)); err != nil {
		return nil
	}
	c := f.capability(proc, name)
	return &c
}

// fillHost sets the host-wide facts: majors, caps style, control nodes,
// IMEX channels and the global MIG capabilities.
func fillHost(h *Host, f *procFacts) error {
	h.CapsMajor = f.majors["nvidia-caps"]
	h.IMEXMajor = f.majors["nvidia-caps-imex-channels"]
	switch _, dev := f.majors["nvidia-caps"]; {
	case dev:
		h.NVCapsStyle = NVCapsDev
	case f.hasCaps:
		h.NVCapsStyle = NVCapsProc
	default:
		h.NVCapsStyle = NVCapsNone
	}
	h.ControlNodes = controlNodes(h, f)
	h.MIGConfig, h.MIGMonitor = f.globalCap("config"), f.globalCap("monitor")
	var err error
	h.IMEXChannels, err = imexChannels(h)
	return err
}

func controlNodes(h *Host, f *procFacts) []Node {
	nodes := []Node{{DevNvidiactl, MajorNvidia, 255}}
	uvm, hasUVM := f.majors["nvidia-uvm"]
	for _, n := range []struct {
		node  Node
		known bool
	}{
		{Node{DevNvidiaUVM, uvm, 0}, hasUVM},
		{Node{DevNvidiaUVMTool, uvm, 1}, hasUVM},
		{Node{DevNvidiaModeset, MajorNvidia, 254}, true},
	} {
		if _, err := os.Lstat(h.HostPath(n.node.Path)); err == nil && n.known {
			nodes = append(nodes, n.node)
		}
	}
	return nodes
}

// imexChannels lists /dev/nvidia-caps-imex-channels/channelN by N.
func imexChannels(h *Host) ([]IMEXChannel, error) {
	if h.IMEXMajor == 0 {
		return nil, nil
	}
	dir := h.HostPath(DevIMEXChannels)
	ents, err := os.ReadDir(dir)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var chans []IMEXChannel
	for _, e := range ents {
		id, err := strconv.ParseUint(strings.TrimPrefix(e.Name(), "channel"), 10, 20)
		if err != nil || !strings.HasPrefix(e.Name(), "channel") {
			continue
		}
		n := Node{Path: filepath.Join(DevIMEXChannels, e.Name()), Major: h.IMEXMajor, Minor: uint32(id)}
		chans = append(chans, IMEXChannel{ID: uint32(id), Node: n})
	}
	slices.SortFunc(chans, func(a, b IMEXChannel) int { return int(a.ID) - int(b.ID) })
	return chans, nil
}
