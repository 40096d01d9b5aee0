package toolkit

import (
	"context"
	"fmt"
	"slices"

	"github.com/opencontainers/runtime-spec/specs-go"
	cdispecs "tags.cncf.io/container-device-interface/specs-go"

	"github.com/go-nvc/nvc/capabilities"
	"github.com/go-nvc/nvc/devices"
	"github.com/go-nvc/nvc/driver"
	"github.com/go-nvc/nvc/nvcontainer"
	"github.com/go-nvc/nvc/nvcontainer/cdispec"
	"github.com/go-nvc/nvc/nvcontainer/request"
)

// JitOptions say where the host is and which hook program a spec made in
// process (jit-cdi) names.
type JitOptions struct {
	// Roots are the config's [nvc] table. Nil: the running host.
	Roots *HostRoots
	// HookPath is the createContainer hook program of the spec. Empty:
	// cdispec.DefaultHookPath.
	HookPath string
	// NVML is the NVML to use when a fact procfs lacks is needed
	// (nvcontainer.HostOptions.NVML): a build without cgo sets
	// [HelperNVML]'s. Nil: in-process NVML in a cgo build, else none.
	NVML devices.NVMLInterface
}

// JitSpec makes the CDI spec (kind JitCDIKind) of the devices ids for a
// container that asks for req, on the host cfg's [nvidia-container-cli]
// root and opts' roots describe: the host is prepared for req
// (nvcontainer.PrepareHostFor: procfs discovery unless [nvc] backend says
// otherwise; kernel modules loaded unless load-kmods = false), the plan
// made without a rootfs (so libraries keep their host paths) and written
// with cdispec.FromPlan. req's capabilities and requirements are
// honoured; a nil or void req asks for compute and utility.
func JitSpec(ctx context.Context, cfg *Config, req *request.Request, ids []string, opts *JitOptions) (*cdispecs.Spec, error) {
	if cfg == nil {
		cfg = DefaultConfig()
	}
	var o JitOptions
	if opts != nil {
		o = *opts
	}
	if o.Roots == nil {
		o.Roots = &HostRoots{}
	}
	r := jitRequest(req, ids)
	roots := o.Roots.Roots
	roots.Driver, roots.LDCache = cfg.CLI.Root, cfg.CLI.Ldcache
	hopts := &nvcontainer.HostOptions{Backend: o.Roots.Backend, LoadModules: !cfg.CLI.NoLoadKmods, IMEXChannels: r.IMEXChannels,
		Driver: &driver.Options{Roots: roots}, NVML: o.NVML}
	if cfg.Features.DisableIMEXChannelCreation {
		hopts.IMEXChannels = nil
	}
	host, _, err := nvcontainer.PrepareHostFor(ctx, hopts, r)
	if err != nil {
		return nil, fmt.Errorf("jit-cdi: %w", err)
	}
	plan, err := nvcontainer.NewPlanContext(ctx, host, r, nvcontainer.Container{}, &nvcontainer.PlanOptions{NVML: host.NVML})
	if err != nil {
		return nil, fmt.Errorf("jit-cdi: %w", err)
	}
	spec, err := cdispec.FromPlan(plan, &cdispec.Options{Kind: JitCDIKind, HookPath: o.HookPath, NoAdditionalGIDs: jitNoAdditionalGIDs(cfg)})
	if err != nil {
		return nil, err
	}
	if err := cdispec.RemoveHooks(spec, jitDisabledHooks(cfg)); err != nil {
		return nil, fmt.Errorf("jit-cdi: %w", err)
	}
	return spec, nil
}

// jitNoAdditionalGIDs: features.no-additional-gids-for-device-nodes, or
// the same nvcdi feature flag in modes.jit-cdi.nvcdi-feature-flags, as the
// toolkit reads either.
func jitNoAdditionalGIDs(cfg *Config) bool {
	return cfg.Features.NoAdditionalGIDsForDeviceNodes ||
		slices.Contains(cfg.Runtime.Modes.JitCDI.NVCDIFeatureFlags, "no-additional-gids-for-device-nodes")
}

// jitDisabledHooks are the hooks of modes.jit-cdi.nvcdi-disable-hooks the
// spec may hold (or "all"); a name no spec holds is ignored, as the
// toolkit ignores it.
func jitDisabledHooks(cfg *Config) []string {
	var out []string
	for _, h := range cfg.Runtime.Modes.JitCDI.NVCDIDisableHooks {
		if h == cdispec.HookAll || slices.Contains(cdispec.HookNames(), h) {
			out = append(out, h)
		}
	}
	return out
}

// jitRequest is req asking for ids ("all" among them: every device).
func jitRequest(req *request.Request, ids []string) *request.Request {
	r := &request.Request{Capabilities: capabilities.HookDefault}
	if req.IsGPU() {
		c := *req
		r = &c
	}
	r.Devices = request.Devices{Mode: request.DevicesList, IDs: ids}
	for _, id := range ids {
		if id == "all" {
			r.Devices = request.Devices{Mode: request.DevicesAll}
		}
	}
	return r
}

// ApplyMode does to spec what the runtime does in d's mode before it
// executes the low-level runtime: ModeCDI injects d.Devices from the
// config's spec dirs, ModeJitCDI makes their spec ([JitSpec]) and injects
// it, ModeCSV makes it from the Tegra mount specs ([CSVSpec]); ModeLegacy, or no device, changes nothing (the caller adds the hook
// for legacy). It reports whether spec changed.
func ApplyMode(ctx context.Context, spec *specs.Spec, cfg *Config, d *ModeDecision, opts *JitOptions) (bool, error) {
	if cfg == nil {
		cfg = DefaultConfig()
	}
	if len(d.Devices) == 0 {
		return false, nil
	}
	switch d.Mode {
	case ModeCDI:
		return true, InjectCDI(spec, d.Devices, cfg.Runtime.Modes.CDI.SpecDirs)
	case ModeJitCDI:
		ids, err := DeviceIDs(d.Devices, JitCDIKind)
		if err != nil {
			return false, err
		}
		cdiSpec, err := JitSpec(ctx, cfg, d.Request, ids, opts)
		if err != nil {
			return false, err
		}
		return true, InjectSpec(spec, cdiSpec, d.Devices)
	case ModeCSV:
		ids, err := DeviceIDs(d.Devices, JitCDIKind)
		if err != nil {
			return false, err
		}
		cdiSpec, err := CSVSpec(cfg, d.Request, ids, opts)
		if err != nil {
			return false, err
		}
		return true, InjectSpec(spec, cdiSpec, d.Devices)
	}
	return false, nil
}
