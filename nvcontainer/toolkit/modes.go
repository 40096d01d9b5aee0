package toolkit

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/opencontainers/runtime-spec/specs-go"
	"tags.cncf.io/container-device-interface/pkg/parser"

	"github.com/go-nvc/nvc/nvcontainer/request"
)

// The runtime modes of [nvidia-container-runtime] mode.
const (
	ModeAuto   = "auto"    // legacy, or cdi when only CDI names are requested
	ModeLegacy = "legacy"  // the runtime adds the prestart hook
	ModeCDI    = "cdi"     // the runtime applies CDI specs from the spec dirs
	ModeJitCDI = "jit-cdi" // the runtime makes a spec for the request and applies it
	ModeCSV    = "csv"     // Tegra: a spec made in process from the CSV mount specs
)

// JitCDIKind is the kind of the devices whose spec the runtime makes when
// the container is created, as NVIDIA's runtime names them.
const JitCDIKind = "runtime.nvidia.com/gpu"

// ErrUnsupportedMode is matched by the error for a runtime mode this
// package knows but does not implement. Every mode is implemented since
// csv landed; it stays for callers that test for it.
var ErrUnsupportedMode = errors.New("unsupported runtime mode")

// RuntimeMode returns the configured [nvidia-container-runtime] mode, ""
// read as auto. An unknown mode matches [ErrInvalidConfig].
func (c *Config) RuntimeMode() (string, error) {
	if c == nil || c.Runtime.Mode == "" {
		return ModeAuto, nil
	}
	switch m := c.Runtime.Mode; m {
	case ModeAuto, ModeLegacy, ModeCDI, ModeJitCDI, ModeCSV:
		return m, nil
	}
	return "", fmt.Errorf("nvidia-container-runtime.mode %q: not auto, legacy, cdi, jit-cdi or csv: %w", c.Runtime.Mode, ErrInvalidConfig)
}

// ModeDecision is what the runtime does with one container.
type ModeDecision struct {
	// Mode is ModeLegacy, ModeCDI, ModeJitCDI or ModeCSV, never ModeAuto.
	Mode string
	// Devices are the fully qualified CDI names to inject (ModeCDI: from
	// the spec dirs; ModeJitCDI: all of kind JitCDIKind), deduplicated, in
	// request order. Nil for ModeLegacy, and when nothing is requested.
	Devices []string
	// Request is the request of the environment and mounts (nil when
	// the devices came from annotations).
	Request *request.Request
}

// ResolveMode decides what the runtime does with the container spec
// describes under cfg (nil: the defaults), as NVIDIA's runtime does:
//
//   - CDI names come from the annotations whose key has one of
//     modes.cdi.annotation-prefixes (each value a comma-separated list of
//     fully qualified names; another name is an error naming the key);
//     without any, from the request of the environment and mounts
//     (request.FromSpec with cfg's options), where an ID that is not a
//     qualified name gets the kind modes.cdi.default-kind (JitCDIKind in
//     jit-cdi mode), "all" included; "void" and "none" name none;
//   - auto is cdi when annotations name devices or every requested device
//     is a fully qualified CDI name; else csv on a Tegra host without a
//     procfs driver ([IsCSVHost]), as NVIDIA's toolkit (1.20) picks csv
//     on Tegra; else legacy. The toolkit then picks jit-cdi on NVML
//     hosts; here legacy stays legacy, the in-process hook being this
//     module's natural path;
//   - in csv mode the requested devices become names of kind JitCDIKind
//     ("all" or "0", the one device of a Tegra host) and annotations are
//     not read, as the toolkit's csv mode reads NVIDIA_VISIBLE_DEVICES
//     only;
//   - in cdi and jit-cdi mode, names of kind JitCDIKind are made in
//     process (ModeJitCDI) and any other kind comes from the spec dirs
//     (ModeCDI); asking for both at once is an error, as in the toolkit.
func ResolveMode(spec *specs.Spec, cfg *Config) (*ModeDecision, error) {
	if cfg == nil {
		cfg = DefaultConfig()
	}
	mode, err := cfg.RuntimeMode()
	if err != nil {
		return nil, err
	}
	if mode == ModeCSV {
		req, err := request.FromSpec(spec, cfg.RequestOptions())
		if err != nil {
			return nil, err
		}
		return csvDecision(req), nil
	}
	var ann map[string]string
	if spec != nil {
		ann = spec.Annotations
	}
	names, err := AnnotationDevices(ann, cfg.Runtime.Modes.CDI.AnnotationPrefixes)
	if err != nil {
		return nil, err
	}
	var req *request.Request
	if len(names) == 0 {
		if req, err = request.FromSpec(spec, cfg.RequestOptions()); err != nil {
			return nil, err
		}
	}
	if mode == ModeAuto {
		mode = ModeLegacy
		switch {
		case len(names) > 0 || OnlyCDINames(req):
			mode = ModeCDI
		case IsCSVHost(cfg):
			return csvDecision(req), nil
		}
	}
	d := &ModeDecision{Mode: mode, Request: req}
	if mode == ModeLegacy {
		return d, nil
	}
	if len(names) == 0 {
		names = QualifyDevices(req, defaultKind(cfg, mode))
	}
	d.Devices = names
	return d, d.splitJit()
}

// defaultKind is the kind given to device IDs that are not CDI names.
func defaultKind(cfg *Config, mode string) string {
	switch {
	case mode == ModeJitCDI:
		return JitCDIKind
	case cfg != nil && cfg.Runtime.Modes.CDI.DefaultKind != "":
		return cfg.Runtime.Modes.CDI.DefaultKind
	}
	return "nvidia.com/gpu"
}

// splitJit sets d.Mode from the kinds of d.Devices: jit-cdi when all are
// JitCDIKind, cdi when none is.
func (d *ModeDecision) splitJit() error {
	jit := 0
	for _, n := range d.Devices {
		if kindOf(n) == JitCDIKind {
			jit++
		}
	}
	switch {
	case jit == 0 && len(d.Devices) > 0:
		d.Mode = ModeCDI
	case jit == len(d.Devices) && jit > 0:
		d.Mode = ModeJitCDI
	case jit > 0:
		return fmt.Errorf("CDI devices %q: devices of kind %s cannot be requested with other CDI devices", d.Devices, JitCDIKind)
	}
	return nil
}

// kindOf is the "vendor/class" of a qualified CDI name.
func kindOf(name string) string {
	kind, _, _ := strings.Cut(name, "=")
	return kind
}

// AnnotationDevices returns the CDI names in the annotations whose key
// starts with one of prefixes: each value is a comma-separated list of
// fully qualified names (empty items skipped). Keys are read in sorted
// order and names deduplicated, so the result does not depend on map
// order. A name that is not fully qualified is an error naming it and its
// key.
func AnnotationDevices(annotations map[string]string, prefixes []string) ([]string, error) {
	keys := make([]string, 0, len(annotations))
	for k := range annotations {
		if slices.ContainsFunc(prefixes, func(p string) bool { return p != "" && strings.HasPrefix(k, p) }) {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	var names []string
	for _, k := range keys {
		for item := range strings.SplitSeq(annotations[k], ",") {
			item = strings.TrimSpace(item)
			if item == "" || slices.Contains(names, item) {
				continue
			}
			if !parser.IsQualifiedName(item) {
				return nil, fmt.Errorf("annotation %q: device %q is not a fully qualified CDI name (vendor/class=name)", k, item)
			}
			names = append(names, item)
		}
	}
	return names, nil
}

// OnlyCDINames reports whether req asks for devices by name and every
// name is a fully qualified CDI name: the toolkit's test for auto mode.
func OnlyCDINames(req *request.Request) bool {
	if req == nil || req.Devices.Mode != request.DevicesList || len(req.Devices.IDs) == 0 {
		return false
	}
	for _, id := range req.Devices.IDs {
		if !parser.IsQualifiedName(id) {
			return false
		}
	}
	return true
}

// QualifyDevices returns req's devices as CDI names: qualified names as
// they are, other IDs (and "all") as kind=ID. Void and none give nil.
func QualifyDevices(req *request.Request, kind string) []string {
	if req == nil {
		return nil
	}
	var ids []string
	switch req.Devices.Mode {
	case request.DevicesAll:
		ids = []string{"all"}
	case request.DevicesList:
		ids = req.Devices.IDs
	}
	var names []string
	for _, id := range ids {
		if !parser.IsQualifiedName(id) {
			id = kind + "=" + id
		}
		if !slices.Contains(names, id) {
			names = append(names, id)
		}
	}
	return names
}

// DeviceIDs returns the device part of each qualified name ("0" for
// runtime.nvidia.com/gpu=0), for the names whose kind is one of kinds; a
// name of another kind is an error naming it.
func DeviceIDs(names []string, kinds ...string) ([]string, error) {
	ids := make([]string, 0, len(names))
	for _, n := range names {
		vendor, class, dev, err := parser.ParseQualifiedName(n)
		if err != nil || !slices.Contains(kinds, vendor+"/"+class) {
			return nil, fmt.Errorf("CDI device %q: not of kind %s", n, strings.Join(kinds, " or "))
		}
		ids = append(ids, dev)
	}
	return ids, nil
}
