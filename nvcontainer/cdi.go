package nvcontainer

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/go-nvc/nvc/capabilities"
	"github.com/go-nvc/nvc/nvcontainer/request"
	specs "tags.cncf.io/container-device-interface/specs-go"
)

// Defaults of CDIOptions.
const (
	// DefaultCDIKind is the kind of NVIDIA GPUs in CDI, "vendor/class".
	DefaultCDIKind = "nvidia.com/gpu"
	// DefaultCDIVersion is the cdiVersion written: the oldest that allows
	// hostPath and names starting with a digit, and the newest podman 4.3
	// loads (it refuses 0.6.0).
	DefaultCDIVersion = "0.5.0"
	// DefaultCDIHookPath is the createContainer hook program. The hooks
	// take the arguments of the NVIDIA Container Toolkit's nvidia-cdi-hook:
	// create-symlinks --link TARGET::LINK, enable-cuda-compat
	// --host-driver-version VERSION, update-ldcache --folder DIR and
	// disable-device-node-modification.
	DefaultCDIHookPath = "/usr/bin/nvidia-cdi-hook"
)

// DefaultCDIHookEnv returns the environment every generated hook runs
// with, a fresh slice on each call. A hook without an explicit env inherits
// the container's (LD_PRELOAD included): CVE-2025-23266.
func DefaultCDIHookEnv() []string { return []string{"NVIDIA_CTK_DEBUG=false"} }

// CDINameStrategy says how CDI devices are named.
type CDINameStrategy string

// The naming strategies of nvidia-ctk cdi generate --device-name-strategy.
const (
	CDINameIndex     CDINameStrategy = "index"      // "0", MIG "1:0"
	CDINameUUID      CDINameStrategy = "uuid"       // "GPU-…", "MIG-…"
	CDINameTypeIndex CDINameStrategy = "type-index" // "gpu0", MIG "mig1:0"
)

// ErrInvalidCDI is matched by the errors of CDISpec and ValidateCDISpec for
// a spec the CDI module would refuse, or options that would make one.
var ErrInvalidCDI = errors.New("invalid CDI spec")

// CDIOptions change the CDI spec a plan is written as. A nil *CDIOptions
// means defaults.
type CDIOptions struct {
	// Kind is the spec's "vendor/class". Empty: DefaultCDIKind.
	Kind string
	// Version is the cdiVersion. Empty: DefaultCDIVersion.
	Version string
	// NameStrategies name the devices; each strategy gives every device
	// one more entry with the same edits. Nil: index and uuid, as
	// nvidia-ctk does.
	NameStrategies []CDINameStrategy
	// NoAllDevice leaves out the "all" device, which holds every device's
	// edits. False: included.
	NoAllDevice bool
	// HookPath is the host path of the createContainer hook program.
	// Empty: DefaultCDIHookPath.
	HookPath string
	// HookEnv is every hook's environment. Nil or empty: DefaultCDIHookEnv()
	// (a hook is never given an empty environment).
	HookEnv []string
}

func (o *CDIOptions) withDefaults() CDIOptions {
	var c CDIOptions
	if o != nil {
		c = *o
	}
	if c.Kind == "" {
		c.Kind = DefaultCDIKind
	}
	if c.Version == "" {
		c.Version = DefaultCDIVersion
	}
	if c.NameStrategies == nil {
		c.NameStrategies = []CDINameStrategy{CDINameIndex, CDINameUUID}
	}
	if c.HookPath == "" {
		c.HookPath = DefaultCDIHookPath
	}
	if len(c.HookEnv) == 0 {
		c.HookEnv = DefaultCDIHookEnv()
	}
	c.HookEnv = slices.Clone(c.HookEnv)
	return c
}

// NewCDISpec plans caps for every device of host with no rootfs and the
// default CUDA compat mode, and writes that plan as a CDI spec: with
// capabilities.All, what nvidia-ctk cdi generate makes. An empty caps
// means no class, as everywhere (see package capabilities): the spec then
// holds the device nodes and no driver file. The plan's warnings are not
// returned: a caller that shows them makes the plan with NewPlan and
// writes it with Plan.CDISpec.
func NewCDISpec(host *Host, caps capabilities.Set, opts *CDIOptions) (*specs.Spec, error) {
	req := &request.Request{Devices: request.Devices{Mode: request.DevicesAll}, Capabilities: caps}
	p, err := NewPlan(host, req, Container{}, nil)
	if err != nil {
		return nil, fmt.Errorf("generating CDI spec: %w", err)
	}
	return p.CDISpec(opts)
}

// CDISpec writes the plan as a CDI spec (tags.cncf.io/container-device-interface,
// validated with ValidateCDISpec), for runtimes that apply CDI themselves
// (podman, containerd, CRI-O):
//
//   - one device per selected GPU and MIG device and naming strategy, plus
//     "all", so that asking the spec for the IDs the plan was made for
//     gives what the plan gives: a GPU in MIG mode is listed too, with its
//     /dev/nvidiaN only (what the plan gives a GPU selected whole); a MIG
//     device gets its parent's node and the nvidia-caps access nodes of
//     its GPU and compute instance; device nodes carry hostPath, type,
//     major and minor, and "rw" access;
//   - spec-wide edits: the shared device nodes (nvidiactl, nvidia-uvm …,
//     IMEX channels), the driver files as bind mounts with the plan's
//     flags, NVIDIA_VISIBLE_DEVICES=void (so a legacy hook does not inject
//     a second time), and createContainer hooks, each with an explicit
//     environment, in the NVIDIA Container Toolkit's order:
//     create-symlinks --link TARGET::LINK for the plan's symlinks;
//     enable-cuda-compat --host-driver-version VERSION with compute, unless
//     the compat mode is disabled or the plan already used an image's
//     compat libraries (the hook decides on the container's
//     /usr/local/cuda/compat and adds an ld.so.conf.d entry);
//     update-ldcache --folder DIR for the loader cache dirs; and
//     disable-device-node-modification where the plan masks
//     /proc/driver/nvidia (the hook mounts a copy of params with
//     ModifyDeviceFiles: 0 over the container's);
//   - devices sorted by name, so the same plan gives the same spec.
//
// What a plan holds that CDI cannot express is left out: the
// /proc/driver/nvidia and application profile tmpfs (a CDI runtime mounts
// the host's procfs; the disable-device-node-modification hook masks
// params) and cgroup rules (the runtime derives them from the device
// nodes). A plan made without a
// rootfs (Layout.HostPaths) mounts the libraries at their host paths, as
// the NVIDIA Container Toolkit's specs do; the hook then adds those dirs
// to the container's loader cache. CDISpec needs the plan's device node
// mounts: a plan made with NoDevbind is refused, and so is a MIG device
// the plan grants without its access nodes (a host whose /proc/devices
// lists no nvidia-caps major, where the plan binds only the capability
// files under /proc/driver/nvidia, which CDI cannot carry).
func (p *Plan) CDISpec(opts *CDIOptions) (*specs.Spec, error) {
	o := opts.withDefaults()
	spec := &specs.Spec{Version: o.Version, Kind: o.Kind, ContainerEdits: p.commonEdits(&o)}
	devs, err := p.cdiDevices(&o)
	if err != nil {
		return nil, err
	}
	spec.Devices = devs
	if err := ValidateCDISpec(spec); err != nil {
		return nil, fmt.Errorf("writing plan as CDI spec: %w", err)
	}
	return spec, nil
}

// cdiDevice is one selected device: its IDs, the plan's "For" values
// whose mounts make up its edits, and, for a MIG device, its own ID, whose
// access nodes it cannot go without.
type cdiDevice struct {
	index, uuid, typeIndex string
	fors                   []string
	mig                    string
}

// selectedDevices lists the plan's devices as CDI sees them: every
// selected GPU (in MIG mode or not: the plan gives a GPU selected whole,
// or as a MIG device's parent, its /dev/nvidiaN) and every selected MIG
// device.
func (p *Plan) selectedDevices() []cdiDevice {
	var out []cdiDevice
	for _, g := range p.GPUs {
		i := strconv.Itoa(g.Index)
		out = append(out, cdiDevice{index: i, uuid: g.UUID, typeIndex: "gpu" + i, fors: []string{i}})
	}
	for _, m := range p.MIGDevices {
		id := fmt.Sprintf("%d:%d", m.Parent, m.Index)
		out = append(out, cdiDevice{index: id, uuid: m.UUID, typeIndex: "mig" + id, fors: []string{strconv.Itoa(m.Parent), id}, mig: id})
	}
	return out
}

// name is d's name under strategy s; empty when it has none (a MIG device
// without UUID, from procfs discovery).
func (d cdiDevice) name(s CDINameStrategy) (string, error) {
	switch s {
	case CDINameIndex:
		return d.index, nil
	case CDINameUUID:
		return d.uuid, nil
	case CDINameTypeIndex:
		return d.typeIndex, nil
	}
	return "", fmt.Errorf("naming CDI devices: unknown strategy %q: %w", string(s), ErrInvalidCDI)
}

// cdiDevices builds the named devices and "all", sorted by name.
func (p *Plan) cdiDevices(o *CDIOptions) ([]specs.Device, error) {
	var devs []specs.Device
	all := &specs.ContainerEdits{}
	for _, d := range p.selectedDevices() {
		edits, err := p.deviceEdits(d)
		if err != nil {
			return nil, err
		}
		mergeEdits(all, edits)
		for _, s := range o.NameStrategies {
			name, err := d.name(s)
			if err != nil {
				return nil, err
			}
			if name != "" {
				devs = append(devs, specs.Device{Name: name, ContainerEdits: *cloneEdits(edits)})
			}
		}
	}
	if !o.NoAllDevice && len(all.DeviceNodes) > 0 {
		devs = append(devs, specs.Device{Name: "all", ContainerEdits: *all})
	}
	slices.SortStableFunc(devs, func(a, b specs.Device) int { return strings.Compare(a.Name, b.Name) })
	return devs, nil
}
