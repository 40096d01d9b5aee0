package devices

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
)

// MajorDRM is the DRM subsystem's character device major (/dev/dri).
const MajorDRM = 226

// DevDRI is the directory of the DRM device nodes; DevDRIByPath that of
// udev's by-path links to them.
const (
	DevDRI       = "/dev/dri"
	DevDRIByPath = DevDRI + "/by-path"
)

// DRM are a GPU's DRM device nodes and their by-path links, as the NVIDIA
// Container Toolkit injects them for the graphics and display
// capabilities: /dev/dri/cardN and /dev/dri/renderDN, found through sysfs
// (<sys root>/bus/pci/devices/<bus id>/drm/), and
// /dev/dri/by-path/pci-<bus id>-card and -render where the host has them.
type DRM struct {
	// Nodes are the card and render nodes, in sysfs's order, each present
	// under the dev root.
	Nodes []Node `json:"nodes,omitempty"`
	// Links are the by-path links that point at one of Nodes.
	Links []DRMLink `json:"links,omitempty"`
}

// DRMLink is a symlink in /dev/dri/by-path: Path is the link, Target its
// content as the host has it ("../card1").
type DRMLink struct {
	Path   string `json:"path"`
	Target string `json:"target"`
}

// drmNodeMinor is the number in name when name is one of the DRM nodes
// the toolkit injects, "card<N>" or "renderD<N>" (N a minor: below
// 2^20). By hand, not with a package-level regexp, which would be
// compiled at every start of the CLI and the hooks.
func drmNodeMinor(name string) (uint32, bool) {
	n, ok := strings.CutPrefix(name, "card")
	if !ok {
		n, ok = strings.CutPrefix(name, "renderD")
	}
	minor, isNum := digits(n, 1<<20-1)
	return uint32(minor), ok && isNum
}

// DRM returns g's DRM nodes and by-path links. A GPU without DRM nodes
// (the nvidia-drm module not loaded, no sysfs, or no PCI bus id) has none,
// and that is not an error; a malformed bus id or sysfs dev file is.
func (h *Host) DRM(g GPU) (DRM, error) {
	if g.BusID == "" {
		return DRM{}, nil
	}
	bus := sysfsBusID(g.BusID)
	if bus == "" {
		return DRM{}, fmt.Errorf("%w: GPU %d: PCI bus id %q", ErrInvalid, g.Index, g.BusID)
	}
	dir := filepath.Join(h.Roots.Sys, "bus/pci/devices", bus, "drm")
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return DRM{}, nil
	}
	if err != nil {
		return DRM{}, fmt.Errorf("listing DRM nodes of GPU %d: %w", g.Index, err)
	}
	var d DRM
	for _, e := range ents {
		n, ok, err := h.drmNode(dir, e.Name())
		if err != nil {
			return DRM{}, err
		}
		if ok {
			d.Nodes = append(d.Nodes, n)
		}
	}
	d.Links = h.drmLinks(bus, d.Nodes)
	return d, nil
}

// drmNode is the node of sysfs entry name under dir, when name is a card
// or render node that exists under the dev root. Its number is sysfs's
// (<entry>/dev, "226:1"), else the kernel's rule (major 226, the number
// in the name as minor).
func (h *Host) drmNode(dir, name string) (Node, bool, error) {
	minor, ok := drmNodeMinor(name)
	if !ok {
		return Node{}, false, nil
	}
	p := DevDRI + "/" + name
	if _, err := os.Lstat(h.HostPath(p)); err != nil {
		return Node{}, false, nil
	}
	n := Node{Path: p, Major: MajorDRM, Minor: minor}
	data, err := os.ReadFile(filepath.Join(dir, name, "dev"))
	if err != nil {
		return n, true, nil
	}
	maj, mnr, ok := strings.Cut(strings.TrimSpace(string(data)), ":")
	a, err1 := strconv.ParseUint(maj, 10, 12)
	b, err2 := strconv.ParseUint(mnr, 10, 20)
	if !ok || err1 != nil || err2 != nil {
		return Node{}, false, fmt.Errorf("%w: %s: %q is not MAJOR:MINOR", ErrInvalid, filepath.Join(dir, name, "dev"), data)
	}
	n.Major, n.Minor = uint32(a), uint32(b)
	return n, true, nil
}

// drmLinks are the host's by-path links of bus that point at one of
// nodes, as the toolkit keeps them.
func (h *Host) drmLinks(bus string, nodes []Node) []DRMLink {
	var links []DRMLink
	for _, kind := range []string{"card", "render"} {
		p := fmt.Sprintf("%s/pci-%s-%s", DevDRIByPath, bus, kind)
		target, err := os.Readlink(h.HostPath(p))
		if err != nil {
			continue
		}
		resolved := target
		if !path.IsAbs(target) {
			resolved = path.Join(DevDRIByPath, target)
		}
		for _, n := range nodes {
			if n.Path == resolved {
				links = append(links, DRMLink{Path: p, Target: target})
				break
			}
		}
	}
	return links
}

// sysfsBusID is a GPU bus id as sysfs names the PCI function: a 4-digit
// domain (wider only when it does not fit), lower case
// (00000000:07:00.0 → 0000:07:00.0); empty when busID is malformed.
func sysfsBusID(busID string) string {
	var domain, bus, dev, fn uint64
	parts := strings.Split(strings.ToLower(busID), ":")
	if len(parts) != 3 {
		return ""
	}
	devFn := strings.Split(parts[2], ".")
	if len(devFn) != 2 {
		return ""
	}
	var errs [4]error
	domain, errs[0] = strconv.ParseUint(parts[0], 16, 32)
	bus, errs[1] = strconv.ParseUint(parts[1], 16, 8)
	dev, errs[2] = strconv.ParseUint(devFn[0], 16, 8)
	fn, errs[3] = strconv.ParseUint(devFn[1], 16, 8)
	if errors.Join(errs[:]...) != nil {
		return ""
	}
	return fmt.Sprintf("%04x:%02x:%02x.%x", domain, bus, dev, fn)
}
