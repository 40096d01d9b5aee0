package fakehost

import (
	"fmt"

	"github.com/go-nvc/nvc/internal/fstree"
)

// PCI identities of the generated sysfs: the GPUs are NVIDIA 3D
// controllers; the decoys are a BMC's VGA controller of another vendor
// (with a DRM card node, card0, as an ASPEED BMC has) and an NVIDIA device
// that is not a display controller (an NVSwitch bridge), neither of which
// may count as a GPU or have its DRM nodes injected.
const (
	PCIVendorNVIDIA  = 0x10de
	PCIClass3D       = 0x030200 // display controller, 3D
	DecoyVGABusID    = "0001:00:01.0"
	DecoyBridgeBusID = "0001:00:02.0"
)

// sysEntries is the sysfs tree a loaded driver leaves: a PCI device
// directory (vendor, device, class) per GPU with its DRM nodes under drm/
// (cardN and renderDN with their dev attribute, N counting from 1 after the decoy VGA's card0), the
// two decoy PCI devices, and module/<name>/initstate for the loaded NVIDIA
// modules.
func sysEntries(gpus []gpuFacts) []fstree.Entry {
	e := pciDevice(DecoyVGABusID, 0x1a03, 0x2000, 0x030000)
	e = append(e, drmSysNode(DecoyVGABusID, "card0", 0))
	e = append(e, pciDevice(DecoyBridgeBusID, PCIVendorNVIDIA, 0x1af1, 0x068000)...)
	for i, g := range gpus {
		card, render := drmNames(i)
		e = append(e, pciDevice(g.procName, PCIVendorNVIDIA, 0x20b0, PCIClass3D)...)
		e = append(e, drmSysNode(g.procName, card, i+1), drmSysNode(g.procName, render, 128+i))
	}
	for _, m := range []string{"nvidia", "nvidia_uvm", "nvidia_modeset", "nvidia_drm"} {
		e = append(e, fstree.Entry{Kind: fstree.File, Path: "sys/module/" + m + "/initstate", Mode: 0o444, Content: []byte("live\n")})
	}
	return e
}

// drmNames are the DRM node names of the i-th GPU: card<i+1> (card0 is
// the decoy VGA's) and renderD<128+i>.
func drmNames(i int) (card, render string) {
	return fmt.Sprintf("card%d", i+1), fmt.Sprintf("renderD%d", 128+i)
}

// drmSysNode is a DRM node's sysfs directory under its PCI device, with
// the dev attribute ("226:1") the kernel gives it.
func drmSysNode(busID, name string, minor int) fstree.Entry {
	return fstree.Entry{Kind: fstree.File, Path: pciDir(busID) + "/drm/" + name + "/dev", Mode: 0o444,
		Content: fmt.Appendf(nil, "%d:%d\n", MajorDRM, minor)}
}

func pciDir(busID string) string { return "sys/bus/pci/devices/" + busID }

// pciDevice is one PCI device's directory with sysfs's vendor, device and
// class attribute files.
func pciDevice(busID string, vendor, device, class int) []fstree.Entry {
	d := pciDir(busID)
	return []fstree.Entry{
		{Kind: fstree.Dir, Path: d, Mode: 0o755},
		{Kind: fstree.File, Path: d + "/vendor", Mode: 0o444, Content: fmt.Appendf(nil, "0x%04x\n", vendor)},
		{Kind: fstree.File, Path: d + "/device", Mode: 0o444, Content: fmt.Appendf(nil, "0x%04x\n", device)},
		{Kind: fstree.File, Path: d + "/class", Mode: 0o444, Content: fmt.Appendf(nil, "0x%06x\n", class)},
	}
}

// driEntries is the /dev/dri tree udev makes for the GPUs and the decoy
// VGA: cardN and renderDN nodes (0666 as the toolkit's fake hosts have
// them; a distribution's udev rules make them 0660 root:video/render) and
// the by-path links pci-<bus id>-card and -render to them.
func driEntries(gpus []gpuFacts) []fstree.Entry {
	e := []fstree.Entry{
		{Kind: fstree.Dir, Path: "dev/dri/by-path", Mode: 0o755},
		devNode("dev/dri/card0", MajorDRM, 0, 0o666),
		byPathLink(DecoyVGABusID, "card", "card0"),
	}
	for i, g := range gpus {
		card, render := drmNames(i)
		e = append(e, devNode("dev/dri/"+card, MajorDRM, i+1, 0o666), devNode("dev/dri/"+render, MajorDRM, 128+i, 0o666),
			byPathLink(g.procName, "card", card), byPathLink(g.procName, "render", render))
	}
	return e
}

func byPathLink(busID, kind, node string) fstree.Entry {
	return fstree.Entry{Kind: fstree.Symlink, Path: fmt.Sprintf("dev/dri/by-path/pci-%s-%s", busID, kind), Target: "../" + node}
}
