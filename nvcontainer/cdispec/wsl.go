package cdispec

import (
	"slices"

	specs "tags.cncf.io/container-device-interface/specs-go"

	"github.com/go-nvc/nvc/devices"
	"github.com/go-nvc/nvc/nvcontainer"
)

// A WSL2 plan binds /dev/dxg, behind which are all the GPUs, and lists no
// GPU one by one. Its spec has, as the NVIDIA Container Toolkit's wsl
// mode writes it, one device, "all", whose edits are /dev/dxg; the
// driver files (libdxcore.so, the driver store files), the links and the
// loader cache dirs are the spec-wide edits.

// isDXGMount reports whether m binds /dev/dxg.
func isDXGMount(m nvcontainer.Mount) bool {
	return m.Kind == nvcontainer.MountDevice && m.Target == devices.DevDXG
}

// isWSLPlan reports whether p is a WSL2 host's plan.
func isWSLPlan(p *nvcontainer.Plan) bool { return slices.ContainsFunc(p.Mounts, isDXGMount) }

// wslDevice is the "all" device of a WSL2 plan, with its /dev/dxg node;
// ok is false off WSL. It is written even with Options.NoAllDevice: it is
// the spec's only device.
func wslDevice(p *nvcontainer.Plan, o *Options) (specs.Device, bool) {
	i := slices.IndexFunc(p.Mounts, isDXGMount)
	if i < 0 {
		return specs.Device{}, false
	}
	e := specs.ContainerEdits{DeviceNodes: []*specs.DeviceNode{cdiNode(p.Mounts[i])}}
	e.AdditionalGIDs = nodeGroups(e.DeviceNodes, o)
	return specs.Device{Name: "all", ContainerEdits: e}, true
}
