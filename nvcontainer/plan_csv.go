package nvcontainer

import (
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/go-nvc/nvc/devices"
	"github.com/go-nvc/nvc/driver"
	"github.com/go-nvc/nvc/nvcontainer/request"
	"github.com/go-nvc/nvc/tegra"
)

// MountDirectory is a host directory bound whole (a Tegra CSV dir entry),
// ro,nosuid,nodev.
const MountDirectory MountKind = "directory"

// CSVDevice is the ID of the one device of a Tegra host in CSV mode (the
// integrated GPU), as the NVIDIA Container Toolkit names it.
const CSVDevice = "0"

// CSVHost is a Tegra host as CSV mode sees it: no procfs driver and no
// NVML, only the mount specs and what they name on the host.
type CSVHost struct {
	// Root is the host's file system image ("/" for this host).
	Root string
	// Release is the L4T release ("36.3.0"); empty when
	// /etc/nv_tegra_release cannot be read.
	Release string
	// Files are the mount spec files that exist, in the order read, as
	// OpenCSVHost was given them.
	Files []string
	// Mounts are the entries of Files found on the host.
	Mounts *tegra.Mounts
}

// OpenCSVHost reads the mount spec files, paths inside specRoot ("" or
// "/": host paths), each resolved and read inside it (tegra.Load; those
// that do not exist are skipped), and finds their entries on the host
// roots describe (tegra.Resolve). specRoot is roots.Driver where the
// specs are the driver root's (nvidia-container-cli --root), "/" where
// they are named as host paths (the toolkit's mount-spec-path). A bad
// line is an error naming its file and line.
func OpenCSVHost(roots driver.Roots, specRoot string, files []string) (*CSVHost, error) {
	root := roots.Driver
	if root == "" {
		root = "/"
	}
	es, err := tegra.Load(specRoot, files)
	if err != nil {
		return nil, fmt.Errorf("reading CSV mount specs: %w", err)
	}
	m, err := tegra.Resolve(es, roots)
	if err != nil {
		return nil, fmt.Errorf("reading CSV mount specs: %w", err)
	}
	h := &CSVHost{Root: root, Mounts: m}
	for _, f := range files {
		if slices.ContainsFunc(es, func(e tegra.Entry) bool { return e.File == tegra.HostPath(specRoot, f) }) {
			h.Files = append(h.Files, f)
		}
	}
	h.Release, _ = tegra.Release(root)
	return h, nil
}

// NewCSVPlan plans a container on a Tegra host in CSV mode, as the NVIDIA
// Container Toolkit's csv mode injects it: the dir entries and the files
// lib and sym entries end at are bound read-only at their paths (before
// the device nodes, so that a node is not hidden by a dir), the dev
// entries' nodes are bound with a device cgroup rule each (unless
// NoDevbind or NoCgroups), the links of the sym entries are created, and
// the loader cache lists the dirs of the libraries and links (names
// holding ".so"). The plan has one GPU, CSVDevice, which every node is
// for.
//
// req must ask for a GPU container; its devices must be "all" or
// CSVDevice (a list naming another is a device error: the toolkit's pure
// CSV mode has one device). Requirements are not checked: there is no
// NVML or procfs driver to check them against (the toolkit asks
// libcuda, which cannot be loaded here). Capabilities select nothing:
// the mount specs are the whole driver.
func NewCSVPlan(h *CSVHost, req *request.Request, ctr Container, opts *PlanOptions) (*Plan, error) {
	if h == nil || h.Mounts == nil {
		return nil, stageErr(StageInput, fmt.Errorf("planning needs a CSV host"))
	}
	if req == nil || !req.IsGPU() {
		return nil, stageErr(StageInput, ErrNotGPUContainer)
	}
	if err := checkRootfs(ctr.Rootfs); err != nil {
		return nil, err
	}
	if err := csvDevices(req.Devices); err != nil {
		return nil, stageErr(StageDevice, err)
	}
	var o PlanOptions
	if opts != nil {
		o = *opts
	}
	p := &Plan{Version: PlanVersion, Container: ctr, Driver: PlanDriver{Root: h.Root, Version: h.Release},
		Capabilities: req.Capabilities, Layout: Layout{HostPaths: ctr.Rootfs == ""},
		GPUs: []PlannedGPU{{Index: 0}}, Tmpfs: []Tmpfs{}, Mounts: []Mount{}, LDCache: LDCacheUpdate{Dirs: []string{}},
		CUDACompat: CUDACompat{Mode: request.CompatDisabled, Reason: "CSV mode: the mount specs decide"},
		Warnings:   slices.Clone(h.Mounts.Warnings)}
	csvFiles(p, h.Mounts)
	csvNodes(p, h.Mounts, o)
	for _, l := range h.Mounts.Links {
		p.Symlinks = append(p.Symlinks, Symlink{Path: l.Path, Target: l.Target})
		ldDir(p, l.Path)
	}
	return p, nil
}

// csvDevices checks a request's devices against the one CSV device.
func csvDevices(d request.Devices) error {
	if d.Mode != request.DevicesList {
		return nil
	}
	for _, id := range d.IDs {
		if id != CSVDevice {
			return &devices.DeviceIDError{ID: id, Reason: "unknown device (CSV mode has device " + CSVDevice + ")", Err: devices.ErrUnknownDevice}
		}
	}
	return nil
}

// csvFiles plans the directories, then the files.
func csvFiles(p *Plan, m *tegra.Mounts) {
	for _, dir := range []bool{true, false} {
		for _, f := range m.Files {
			if f.Dir != dir {
				continue
			}
			kind := MountLibrary
			if f.Dir {
				kind = MountDirectory
			}
			p.Mounts = append(p.Mounts, Mount{Kind: kind, Source: f.Source, Target: f.Path, Options: kindOptions(kind), Dir: f.Dir})
			if !f.Dir {
				ldDir(p, f.Path)
			}
		}
	}
	if len(p.Mounts) > 0 {
		p.Layout.LibDir = path.Dir(p.Mounts[len(p.Mounts)-1].Target)
		for _, mt := range p.Mounts {
			if strings.Contains(path.Base(mt.Target), ".so") {
				p.Layout.LibDir = path.Dir(mt.Target)
				break
			}
		}
	}
}

// csvNodes plans the device nodes and their cgroup rules.
func csvNodes(p *Plan, m *tegra.Mounts, o PlanOptions) {
	seen := map[DeviceNumber]bool{}
	for _, n := range m.Nodes {
		num := DeviceNumber{Major: n.Major, Minor: n.Minor}
		if !o.NoDevbind {
			p.Mounts = append(p.Mounts, Mount{Kind: MountDevice, Source: n.Source, Target: n.Path,
				Options: kindOptions(MountDevice), Device: &num, For: CSVDevice})
		}
		if !o.NoCgroups && !seen[num] {
			seen[num] = true
			p.CgroupRules = append(p.CgroupRules, DeviceRule{Type: "c", Major: n.Major, Minor: n.Minor, Access: "rw"})
		}
	}
}

// ldDir adds the dir of a library or link (a name holding ".so") to the
// loader cache update.
func ldDir(p *Plan, target string) {
	if !strings.Contains(path.Base(target), ".so") {
		return
	}
	if d := path.Dir(target); !slices.Contains(p.LDCache.Dirs, d) {
		p.LDCache.Dirs = append(p.LDCache.Dirs, d)
	}
}
