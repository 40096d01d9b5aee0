package cdispec

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/go-nvc/nvc/capabilities"
	"github.com/go-nvc/nvc/nvcontainer"
	"github.com/go-nvc/nvc/nvcontainer/request"
	specs "tags.cncf.io/container-device-interface/specs-go"
)

// Defaults of Options.
const (
	// DefaultKind is the kind of NVIDIA GPUs in CDI, "vendor/class".
	DefaultKind = "nvidia.com/gpu"
	// DefaultVersion is the least cdiVersion written: the oldest that
	// allows hostPath and names starting with a digit, and the newest
	// podman 4.3 loads (it refuses 0.6.0). A spec that needs more (the
	// additionalGids of nodes that are not world-accessible need 0.7.0)
	// gets the least version that allows its content, as the NVIDIA
	// Container Toolkit writes it.
	DefaultVersion = "0.5.0"
	// DefaultHookPath is the createContainer hook program. The hooks
	// take the arguments of the NVIDIA Container Toolkit's nvidia-cdi-hook:
	// create-symlinks --link TARGET::LINK, enable-cuda-compat
	// --host-driver-version VERSION, update-ldcache --folder DIR and
	// disable-device-node-modification.
	DefaultHookPath = "/usr/bin/nvidia-cdi-hook"
)

// DefaultHookEnv returns the environment every generated hook runs
// with, a fresh slice on each call. A hook without an explicit env inherits
// the container's (LD_PRELOAD included): CVE-2025-23266.
func DefaultHookEnv() []string { return []string{"NVIDIA_CTK_DEBUG=false"} }

// NameStrategy says how CDI devices are named.
type NameStrategy string

// The naming strategies of nvidia-ctk cdi generate --device-name-strategy.
const (
	NameIndex     NameStrategy = "index"      // "0", MIG "1:0"
	NameUUID      NameStrategy = "uuid"       // "GPU-…", "MIG-…"
	NameTypeIndex NameStrategy = "type-index" // "gpu0", MIG "mig1:0"
)

// ErrInvalid is matched by the errors of FromPlan, FromHost and Validate
// for a spec the CDI module would refuse, or options that would make one.
var ErrInvalid = errors.New("invalid CDI spec")

// Options change the CDI spec a plan is written as. A nil *Options, like
// a zero one, means the defaults.
type Options struct {
	// Kind is the spec's "vendor/class". Empty: DefaultKind.
	Kind string
	// Version is the cdiVersion. Empty: the least version the content
	// needs, at least DefaultVersion.
	Version string
	// NameStrategies name the devices; each strategy gives every device
	// one more entry with the same edits. Nil: index and uuid, as
	// nvidia-ctk does.
	NameStrategies []NameStrategy
	// NoAllDevice leaves out the "all" device, which holds every device's
	// edits. False: included.
	NoAllDevice bool
	// HookPath is the host path of the createContainer hook program.
	// Empty: DefaultHookPath.
	HookPath string
	// HookEnv is every hook's environment. Nil or empty: DefaultHookEnv()
	// (a hook is never given an empty environment).
	HookEnv []string
	// NoAdditionalGIDs leaves out the additionalGids of device nodes that
	// are not world-accessible (the NVIDIA Container Toolkit's feature
	// flag no-additional-gids-for-device-nodes), which keep the spec at
	// DefaultVersion, the newest podman 4.3 loads; a runtime still gives
	// such a node the container user as owner. False: included.
	NoAdditionalGIDs bool
}

func (o *Options) withDefaults() Options {
	var c Options
	if o != nil {
		c = *o
	}
	if c.Kind == "" {
		c.Kind = DefaultKind
	}
	if c.NameStrategies == nil {
		c.NameStrategies = []NameStrategy{NameIndex, NameUUID}
	}
	if c.HookPath == "" {
		c.HookPath = DefaultHookPath
	}
	if len(c.HookEnv) == 0 {
		c.HookEnv = DefaultHookEnv()
	}
	c.HookEnv = slices.Clone(c.HookEnv)
	return c
}

// FromHost plans caps for every device of host with no rootfs and the
// default CUDA compat mode, and writes that plan as a CDI spec: with
// capabilities.All, what nvidia-ctk cdi generate makes. An empty caps
// means no class, as everywhere (see package capabilities): the spec then
// holds the device nodes and no driver file. The plan's warnings are not
// returned: a caller that shows them makes the plan with
// nvcontainer.NewPlan and writes it with [FromPlan].
func FromHost(host *nvcontainer.Host, caps capabilities.Set, opts *Options) (*specs.Spec, error) {
	req := &request.Request{Devices: request.Devices{Mode: request.DevicesAll}, Capabilities: caps}
	p, err := nvcontainer.NewPlan(host, req, nvcontainer.Container{}, nil)
	if err != nil {
		return nil, fmt.Errorf("generating CDI spec: %w", err)
	}
	return FromPlan(p, opts)
}

// FromPlan writes p as a CDI spec (tags.cncf.io/container-device-interface,
// validated with [Validate]), for runtimes that apply CDI themselves
// (podman, containerd, CRI-O). It reads only the plan's public fields and
// changes nothing. See the package documentation for what the spec holds
// and what a plan holds that CDI cannot express. FromPlan needs the
// plan's device node mounts: a plan made with NoDevbind is refused, and
// so is a MIG device the plan grants without its access nodes (a host
// whose /proc/devices lists no nvidia-caps major, where the plan binds
// only the capability files under /proc/driver/nvidia, which CDI cannot
// carry).
func FromPlan(p *nvcontainer.Plan, opts *Options) (*specs.Spec, error) {
	o := opts.withDefaults()
	spec := &specs.Spec{Version: o.Version, Kind: o.Kind, ContainerEdits: commonEdits(p, &o)}
	devs, err := cdiDevices(p, &o)
	if err != nil {
		return nil, err
	}
	spec.Devices = devs
	if spec.Version == "" {
		spec.Version = leastVersion(spec)
	}
	if err := Validate(spec); err != nil {
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

// selectedDevices lists p's devices as CDI sees them: every
// selected GPU (in MIG mode or not: the plan gives a GPU selected whole,
// or as a MIG device's parent, its /dev/nvidiaN) and every selected MIG
// device.
func selectedDevices(p *nvcontainer.Plan) []cdiDevice {
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
func (d cdiDevice) name(s NameStrategy) (string, error) {
	switch s {
	case NameIndex:
		return d.index, nil
	case NameUUID:
		return d.uuid, nil
	case NameTypeIndex:
		return d.typeIndex, nil
	}
	return "", fmt.Errorf("naming CDI devices: unknown strategy %q: %w", string(s), ErrInvalid)
}

// cdiDevices builds the named devices and "all", sorted by name.
func cdiDevices(p *nvcontainer.Plan, o *Options) ([]specs.Device, error) {
	var devs []specs.Device
	all := &specs.ContainerEdits{}
	for _, d := range selectedDevices(p) {
		edits, err := deviceEdits(p, d, o)
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
	if d, ok := wslDevice(p, o); ok {
		devs = append(devs, d)
	} else if !o.NoAllDevice && len(all.DeviceNodes) > 0 {
		devs = append(devs, specs.Device{Name: "all", ContainerEdits: *all})
	}
	slices.SortStableFunc(devs, func(a, b specs.Device) int { return strings.Compare(a.Name, b.Name) })
	return devs, nil
}

// leastVersion is the least cdiVersion spec's content needs, at least
// DefaultVersion.
func leastVersion(spec *specs.Spec) string {
	v, err := specs.MinimumRequiredVersion(spec)
	if err != nil || versionLess(v, DefaultVersion) {
		return DefaultVersion
	}
	return v
}

// versionLess compares two "x.y.z" versions.
func versionLess(a, b string) bool {
	pa, pb := strings.Split(a, "."), strings.Split(b, ".")
	for i := 0; i < len(pa) && i < len(pb); i++ {
		x, _ := strconv.Atoi(pa[i])
		y, _ := strconv.Atoi(pb[i])
		if x != y {
			return x < y
		}
	}
	return len(pa) < len(pb)
}
