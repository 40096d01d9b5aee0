package nvcontainer

import (
	"fmt"

	"github.com/go-nvc/nvc/capabilities"
	"github.com/go-nvc/nvc/devices"
)

// planDRM binds a selected GPU's DRM card and render nodes and links
// their /dev/dri/by-path names, as the NVIDIA Container Toolkit does for
// the graphics and display capabilities: nodes found through sysfs
// (devices.Host.DRM), links where the host has them pointing at those
// nodes. A GPU in MIG mode gets none (its DRM nodes are the whole GPU's).
// With NoDevbind the nodes are allowed in the cgroup and not bound, as
// every node, and not linked (the links would dangle). A sysfs the nodes
// cannot be read from is a warning.
func (pl *planner) planDRM(g devices.GPU, id string) {
	if !pl.exp.Has(capabilities.Graphics) && !pl.exp.Has(capabilities.Display) || g.MIGEnabled {
		return
	}
	d, err := pl.dev.DRM(g)
	if err != nil {
		pl.warn(fmt.Sprintf("no DRM nodes for GPU %s: %v", id, err))
		return
	}
	for _, n := range d.Nodes {
		pl.node(n, id)
	}
	if pl.opts.NoDevbind {
		return
	}
	for _, l := range d.Links {
		pl.p.Symlinks = append(pl.p.Symlinks, Symlink{Path: l.Path, Target: l.Target, For: id})
	}
}
