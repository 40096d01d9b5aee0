package cdispec

import (
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/go-nvc/nvc/capabilities"
	"github.com/go-nvc/nvc/devices"
	"github.com/go-nvc/nvc/nvcontainer"
	"github.com/go-nvc/nvc/nvcontainer/request"
	specs "tags.cncf.io/container-device-interface/specs-go"
)

// The hook names and CDI's bind options.
const (
	cdiHookName       = "createContainer"
	hookCreateLinks   = "create-symlinks"
	hookCUDACompat    = "enable-cuda-compat"
	hookUpdateLDCache = "update-ldcache"
	hookNoDeviceNodes = "disable-device-node-modification"
	hookAppProfile    = "update-application-profile"
	cdiVoidEnv        = request.EnvVisibleDevices + "=void"
	// cdiPermissions are a node's cgroup access, as the NVIDIA Container
	// Toolkit writes it: read, write and mknod.
	cdiPermissions = "rwm"
)

// EnvLibCUDADir names, in a spec's environment, the container dirs that
// hold the driver's libraries (lib*.so.<driver version>), joined by ":",
// as the NVIDIA Container Toolkit's specs do.
const EnvLibCUDADir = "NVIDIA_CTK_LIBCUDA_DIR"

// LibCUDADirs are the container dirs of p's native driver libraries
// (file names lib*.so.<driver version>), each once, in plan order: the
// value of EnvLibCUDADir.
func LibCUDADirs(p *nvcontainer.Plan) []string {
	var dirs []string
	for _, m := range p.Mounts {
		base := path.Base(m.Target)
		if m.Kind != nvcontainer.MountLibrary || p.Driver.Version == "" || !strings.HasPrefix(base, "lib") ||
			!strings.HasSuffix(base, ".so."+p.Driver.Version) {
			continue
		}
		if d := path.Dir(m.Target); !slices.Contains(dirs, d) {
			dirs = append(dirs, d)
		}
	}
	return dirs
}

// cdiBindOptions are added to a plan mount's flags: CDI mounts are bind
// mounts, private to the container.
var cdiBindOptions = []string{"rbind", "rprivate"}

// commonEdits are the spec-wide edits: shared nodes, driver files, the
// hooks, and NVIDIA_VISIBLE_DEVICES=void.
func commonEdits(p *nvcontainer.Plan, o *Options) specs.ContainerEdits {
	e := specs.ContainerEdits{Env: []string{cdiVoidEnv}}
	if dirs := LibCUDADirs(p); len(dirs) > 0 {
		e.Env = append(e.Env, EnvLibCUDADir+"="+strings.Join(dirs, ":"))
	}
	for _, m := range p.Mounts {
		if m.For != "" {
			continue
		}
		if isDXGMount(m) {
			continue // the "all" device's (wslDevice)
		}
		if m.Kind == nvcontainer.MountDevice {
			e.DeviceNodes = append(e.DeviceNodes, cdiNode(m))
			continue
		}
		e.Mounts = append(e.Mounts, cdiMount(m))
	}
	e.AdditionalGIDs = nodeGroups(e.DeviceNodes, o)
	e.Hooks = cdiHooks(p, o)
	return e
}

// deviceEdits are one device's nodes: the plan's device mounts made for
// it (and, for a MIG device, for its parent GPU), and a create-symlinks
// hook for its links (a GPU's /dev/dri/by-path links). A MIG device without
// access nodes of its own is refused: the spec would give it a GPU node a
// container cannot use it through.
func deviceEdits(p *nvcontainer.Plan, d cdiDevice, o *Options) (*specs.ContainerEdits, error) {
	e := &specs.ContainerEdits{}
	own := 0
	for _, m := range p.Mounts {
		if m.Kind != nvcontainer.MountDevice {
			continue
		}
		fors := mountDevices(m)
		if slices.ContainsFunc(d.fors, func(id string) bool { return slices.Contains(fors, id) }) {
			e.DeviceNodes = append(e.DeviceNodes, cdiNode(m))
		}
		if d.mig != "" && slices.Contains(fors, d.mig) {
			own++
		}
	}
	e.AdditionalGIDs = nodeGroups(e.DeviceNodes, o)
	if h := linksHook(p, o, func(l nvcontainer.Symlink) bool { return l.For != "" && slices.Contains(d.fors, l.For) }); h != nil {
		e.Hooks = []*specs.Hook{h}
	}
	if len(e.DeviceNodes) == 0 {
		return nil, fmt.Errorf("writing CDI device %s: the plan has no device node for it (made with NoDevbind?): %w", d.index, ErrInvalid)
	}
	if d.mig != "" && own < migAccessNodes {
		return nil, fmt.Errorf("writing CDI device %s: the plan has %d of the %d nvidia-caps access nodes of its GPU and compute instance "+
			"(does the host's %s list nvidia-caps?): %w", d.index, own, migAccessNodes, devices.ProcDevices, ErrInvalid)
	}
	return e, nil
}

// mountDevices are the index IDs of the devices m is for (Mount.For);
// none for what every device shares.
func mountDevices(m nvcontainer.Mount) []string {
	if m.For == "" {
		return nil
	}
	return strings.Split(m.For, ",")
}

// migAccessNodes is how many nvidia-caps nodes a MIG device is used
// through: its GPU instance's access and its compute instance's.
const migAccessNodes = 2

// cdiNode is a device node mount as CDI writes it, with the host node's
// mode and group (hostNodeAttrs).
func cdiNode(m nvcontainer.Mount) *specs.DeviceNode {
	n := &specs.DeviceNode{Path: m.Target, HostPath: m.Source, Type: "c",
		Major: int64(m.Device.Major), Minor: int64(m.Device.Minor), Permissions: cdiPermissions}
	hostNodeAttrs(n)
	return n
}

// nodeGroups are the groups of nodes that are not world readable and
// writable, sorted, each once: a container process gets them as
// additional groups, so that a non-root user opens a 0660 root:video
// node, as the NVIDIA Container Toolkit does. None with NoAdditionalGIDs.
func nodeGroups(nodes []*specs.DeviceNode, o *Options) []uint32 {
	if o.NoAdditionalGIDs {
		return nil
	}
	var gids []uint32
	for _, n := range nodes {
		if n.GID == nil || n.FileMode == nil || *n.FileMode&0o006 == 0o006 {
			continue
		}
		gids = append(gids, *n.GID)
	}
	slices.Sort(gids)
	return slices.Compact(gids)
}

func cdiMount(m nvcontainer.Mount) *specs.Mount {
	opts := append(slices.Clone(m.Options), cdiBindOptions...)
	return &specs.Mount{HostPath: m.Source, ContainerPath: m.Target, Options: opts}
}

// cdiHooks are, in the NVIDIA Container Toolkit's order and each only
// when it has something to do: create-symlinks for the plan's links that
// are every device's (a device's own are in its edits),
// enable-cuda-compat for the image's forward-compatibility libraries,
// update-ldcache for its loader cache dirs (first dirs first), and on a
// discrete-GPU host (the plan masks /proc/driver/nvidia: not WSL, not a
// Tegra CSV plan) disable-device-node-modification and, last,
// update-application-profile, which limits EGL and Vulkan to the GPUs the
// container got (where the toolkit's NVML discovery puts it, the last of
// the common edits; its WSL and CSV discovery have none).
func cdiHooks(p *nvcontainer.Plan, o *Options) []*specs.Hook {
	var hooks []*specs.Hook
	if h := linksHook(p, o, func(l nvcontainer.Symlink) bool { return l.For == "" }); h != nil {
		hooks = append(hooks, h)
	}
	if needsCompatHook(p) {
		hooks = append(hooks, o.hook([]string{hookCUDACompat, "--host-driver-version", p.Driver.Version}))
	}
	dirs := append(slices.Clone(p.LDCache.FirstDirs), p.LDCache.Dirs...)
	if len(dirs) > 0 {
		args := []string{hookUpdateLDCache}
		for _, d := range dirs {
			args = append(args, "--folder", d)
		}
		hooks = append(hooks, o.hook(args))
	}
	if masksProcDriver(p) {
		hooks = append(hooks, o.hook([]string{hookNoDeviceNodes}), o.hook([]string{hookAppProfile}))
	}
	return hooks
}

// linksHook is a create-symlinks hook for the plan's links that keep
// selects; nil when there are none.
func linksHook(p *nvcontainer.Plan, o *Options, keep func(nvcontainer.Symlink) bool) *specs.Hook {
	args := []string{hookCreateLinks}
	for _, l := range p.Symlinks {
		if keep(l) {
			args = append(args, "--link", l.Target+"::"+l.Path)
		}
	}
	if len(args) == 1 {
		return nil
	}
	return o.hook(args)
}

// needsCompatHook reports whether the container must decide on CUDA
// forward compatibility itself: compute is asked for, the mode is not
// disabled, the driver version is known, the plan did not already use
// compat libraries of an image it inspected, and the host is no WSL2 one
// (the toolkit's wsl mode has no such hook).
func needsCompatHook(p *nvcontainer.Plan) bool {
	return !isWSLPlan(p) && p.Capabilities.Expand().Has(capabilities.Compute) && p.CUDACompat.Mode != request.CompatDisabled &&
		!p.CUDACompat.Used && p.Driver.Version != ""
}

// masksProcDriver reports whether the plan masks /proc/driver/nvidia, whose
// params copy stops the driver from making device nodes in the container
// (none on WSL). CDI cannot carry the tmpfs; the hook does its part.
func masksProcDriver(p *nvcontainer.Plan) bool {
	for _, t := range p.Tmpfs {
		if t.Target == devices.ProcDriver {
			return true
		}
	}
	return false
}

// hook is a createContainer hook running HookPath with args and the
// explicit environment.
func (o *Options) hook(args []string) *specs.Hook {
	argv := append([]string{path.Base(o.HookPath)}, args...)
	return &specs.Hook{HookName: cdiHookName, Path: o.HookPath, Args: argv, Env: slices.Clone(o.HookEnv)}
}

// mergeEdits adds src's device nodes to dst, each path once, its
// additional groups, each once, sorted, and its hooks.
func mergeEdits(dst, src *specs.ContainerEdits) {
	for _, h := range src.Hooks {
		c := *h
		c.Args, c.Env = slices.Clone(h.Args), slices.Clone(h.Env)
		dst.Hooks = append(dst.Hooks, &c)
	}
	for _, n := range src.DeviceNodes {
		if !slices.ContainsFunc(dst.DeviceNodes, func(d *specs.DeviceNode) bool { return d.Path == n.Path }) {
			c := *n
			dst.DeviceNodes = append(dst.DeviceNodes, &c)
		}
	}
	if len(src.AdditionalGIDs) > 0 {
		dst.AdditionalGIDs = append(dst.AdditionalGIDs, src.AdditionalGIDs...)
		slices.Sort(dst.AdditionalGIDs)
		dst.AdditionalGIDs = slices.Compact(dst.AdditionalGIDs)
	}
}

// cloneEdits copies a device's edits so that devices share no pointers.
func cloneEdits(e *specs.ContainerEdits) *specs.ContainerEdits {
	c := &specs.ContainerEdits{}
	mergeEdits(c, e)
	return c
}
