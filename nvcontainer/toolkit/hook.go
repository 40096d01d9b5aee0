package toolkit

import (
	"context"
	"fmt"
	"io"
	"slices"

	"github.com/opencontainers/runtime-spec/specs-go"
	"tags.cncf.io/container-device-interface/pkg/parser"

	"github.com/go-nvc/nvc/internal/oci"
	"github.com/go-nvc/nvc/nvcontainer"
	"github.com/go-nvc/nvc/nvcontainer/request"
)

// ContainerFor returns the container a hook's state and spec describe: the
// state's PID and its root filesystem — crun's state "root" when set (the
// NVIDIA Container Toolkit's order: crun reports the root it resolved),
// else the spec's root.path, joined to the bundle directory when relative.
// A rootfs that is missing or "/" is an error matching [nvcontainer.ErrInvalidRootfs].
func ContainerFor(st *request.State, spec *specs.Spec) (nvcontainer.Container, error) {
	rootfs, err := oci.Rootfs((*oci.State)(st), spec)
	if err != nil {
		return nvcontainer.Container{}, err
	}
	return nvcontainer.Container{PID: st.PID, Rootfs: rootfs}, nil
}

// RequestFromHook does what nvidia-container-runtime-hook prestart does
// before it executes nvidia-container-cli: it reads the OCI state from
// stdin, loads the bundle's config.json, and builds the request and the
// container from them. cfg nil means [DefaultConfig]. ctx bounds the read
// of stdin (see [request.ReadState]).
func RequestFromHook(ctx context.Context, stdin io.Reader, cfg *Config) (*request.Request, nvcontainer.Container, error) {
	st, err := request.ReadState(ctx, stdin)
	if err != nil {
		return nil, nvcontainer.Container{}, err
	}
	spec, err := request.LoadSpec(st.BundleDir())
	if err != nil {
		return nil, nvcontainer.Container{}, err
	}
	ctr, err := ContainerFor(st, spec)
	if err != nil {
		return nil, nvcontainer.Container{}, err
	}
	if cfg == nil {
		cfg = DefaultConfig()
	}
	req, err := request.FromSpec(spec, cfg.RequestOptions())
	if err != nil {
		return nil, nvcontainer.Container{}, fmt.Errorf("building the request of bundle %s: %w", st.BundleDir(), err)
	}
	if err := HookDevices(req, cfg); err != nil {
		return nil, nvcontainer.Container{}, fmt.Errorf("building the request of bundle %s: %w", st.BundleDir(), err)
	}
	return req, ctr, nil
}

// HookSkips reports why the runtime hook leaves a container alone under
// cfg (nil: the defaults): "" when it configures containers, in mode
// legacy or auto, or with skip-mode-detection. In cdi, jit-cdi and csv
// mode, and in auto mode on a Tegra host ([IsCSVHost]: the runtime's auto
// is csv there), the runtime has applied CDI edits already, so the hook
// does nothing, where NVIDIA's hook refuses ("invoking the NVIDIA
// Container Runtime Hook directly … is not supported"). An unknown mode
// is an error.
func HookSkips(cfg *Config) (string, error) {
	if cfg == nil || cfg.Hook.SkipModeDetection {
		return "", nil
	}
	mode, err := cfg.RuntimeMode()
	if err != nil {
		return "", err
	}
	if mode == ModeAuto && IsCSVHost(cfg) {
		return "nvidia-container-runtime.mode is auto on a Tegra host: the runtime applies the CSV mount specs, the hook does nothing", nil
	}
	if mode == ModeLegacy || mode == ModeAuto {
		return "", nil
	}
	return fmt.Sprintf("nvidia-container-runtime.mode is %s: the runtime applies CDI, the hook does nothing", mode), nil
}

// HookDevices rewrites the CDI names among req's device IDs to the IDs
// configure takes, as the runtime hook does in legacy and auto mode
// (where NVIDIA's hook refuses a request of CDI names only): a name of
// modes.cdi.default-kind (nvidia.com/gpu) or [JitCDIKind] becomes its
// device part ("nvidia.com/gpu=0" is "0", "=all" every GPU) — the names
// this module's specs give the devices are the IDs configure selects by.
// A name of another kind is an error naming it: only a CDI runtime can
// resolve it.
func HookDevices(req *request.Request, cfg *Config) error {
	if req == nil || req.Devices.Mode != request.DevicesList {
		return nil
	}
	kind := defaultKind(cfg, ModeCDI)
	var ids []string
	for _, id := range req.Devices.IDs {
		if parser.IsQualifiedName(id) {
			dev, err := DeviceIDs([]string{id}, kind, JitCDIKind)
			if err != nil {
				return fmt.Errorf("%w: only a CDI runtime (nvidia-container-runtime.mode = \"cdi\") can inject it", err)
			}
			id = dev[0]
		}
		if id == "all" {
			req.Devices = request.Devices{Mode: request.DevicesAll}
			return nil
		}
		if !slices.Contains(ids, id) {
			ids = append(ids, id)
		}
	}
	req.Devices.IDs = ids
	return nil
}
