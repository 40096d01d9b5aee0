package request

import (
	"errors"

	"github.com/opencontainers/runtime-spec/specs-go"

	"github.com/go-nvc/nvc/capabilities"
)

// ErrUnprivileged is matched (with errors.Is) by the error for a request an
// unprivileged container may not make (NVIDIA_MIG_CONFIG_DEVICES,
// NVIDIA_MIG_MONITOR_DEVICES).
var ErrUnprivileged = errors.New("not allowed in an unprivileged container")

// Request is what a container asks for. The zero Request is "not a GPU
// container": nothing is to be injected.
type Request struct {
	// Devices selects the GPUs. Mode DevicesVoid (the zero value) means this
	// is not a GPU container and every other field is empty.
	Devices Devices `json:"devices"`
	// Capabilities are the driver capability classes to inject. Empty: no
	// class, so the device nodes, procfs and firmware only (see package
	// capabilities); New applies the hook's rule for an empty
	// NVIDIA_DRIVER_CAPABILITIES before this field is set.
	Capabilities capabilities.Set `json:"capabilities"`
	// Requirements are NVIDIA_REQUIRE_* expressions (see requirement.Check),
	// in sorted variable order, the legacy image's cuda>=X.Y last. Nil when
	// DisableRequire is set.
	Requirements []string `json:"requirements,omitempty"`
	// DisableRequire records that requirement checks are off
	// (NVIDIA_DISABLE_REQUIRE, or disable-require in the config).
	DisableRequire bool `json:"disableRequire,omitempty"`
	// MIGConfig is NVIDIA_MIG_CONFIG_DEVICES as given ("all"); empty: none.
	// nvidia-container-cli accepts only "all".
	MIGConfig string `json:"migConfig,omitempty"`
	// MIGMonitor is NVIDIA_MIG_MONITOR_DEVICES as given; empty: none.
	MIGMonitor string `json:"migMonitor,omitempty"`
	// IMEXChannels are the IMEX channel numbers (each below 2^20), in
	// first-seen order. Empty: none ("all" asks for none explicitly).
	IMEXChannels []uint32 `json:"imexChannels,omitempty"`
	// CUDACompatMode is how CUDA forward-compatibility libraries from the
	// image are used. Empty: nvidia-container-cli's default (mount).
	CUDACompatMode CUDACompatMode `json:"cudaCompatMode,omitempty"`
	// Jetpack is NVIDIA_REQUIRE_JETPACK, which is no requirement: in CSV
	// mode (Tegra) "csv-mounts=all" reads every mount spec file, anything
	// else only the base ones (package tegra, SelectFiles).
	Jetpack string `json:"jetpack,omitempty"`
	// Notes are facts the runtime hook would log: requests that were
	// ignored, and why.
	Notes []string `json:"notes,omitempty"`
}

// IsGPU reports whether r asks for a GPU container at all; false for a nil
// Request.
func (r *Request) IsGPU() bool { return r != nil && r.Devices.Mode != DevicesVoid }

// CUDACompatMode is nvidia-container-cli's --cuda-compat-mode.
type CUDACompatMode string

// The CUDA forward-compatibility modes (libnvidia-container's --cuda-compat-mode).
const (
	// CompatDefault passes no flag: nvidia-container-cli then mounts.
	CompatDefault CUDACompatMode = ""
	// CompatMount bind-mounts the image's compat libraries next to the
	// driver's.
	CompatMount CUDACompatMode = "mount"
	// CompatLdconfig points the container's ldconfig at the compat
	// directory instead of mounting.
	CompatLdconfig CUDACompatMode = "ldconfig"
	// CompatDisabled ignores the image's compat libraries.
	CompatDisabled CUDACompatMode = "disabled"
)

// Input is what a request is built from.
type Input struct {
	// Env is the container's environment, "KEY=value" entries; a later
	// entry for a key wins. An entry without "=" is an error.
	Env []string
	// Mounts are the spec's mounts. They matter only with
	// Options.AcceptDeviceListAsVolumeMounts; nil: none.
	Mounts []specs.Mount
	// Privileged is whether the container holds CAP_SYS_ADMIN in its
	// bounding set. False refuses NVIDIA_MIG_* and, with
	// Options.IgnoreEnvvarUnprivileged, ignores environment requests.
	Privileged bool
}

// New builds a request with the rules of nvidia-container-runtime-hook
// (see the package documentation). opts nil means the zero
// [Options], the toolkit's defaults.
//
// Errors name the variable and value at fault: an environment entry without
// "=", an invalid device list or IMEX channel, NVIDIA_MIG_* in an
// unprivileged container ([ErrUnprivileged]), an unknown or unsupported
// capability, an invalid CUDA_VERSION on a legacy image, a request past
// one of the bounds ([MaxDevices], [MaxIMEXChannels], [MaxRequirements],
// [MaxEnvValue], [MaxEnvSize]: [ErrTooLarge]). Only the variables
// a request reads are looked at beyond the "=" check.
func New(in Input, opts *Options) (*Request, error) {
	if opts == nil {
		opts = &Options{}
	}
	env, err := parseEnv(in.Env, opts.swarmResourceVars())
	if err != nil {
		return nil, err
	}
	b := &builder{env: env, in: in, opts: opts, req: &Request{}}
	return b.build()
}

// FromEnv builds a request from an environment alone, with the
// default config, for an unprivileged container (NVIDIA_MIG_* refused).
func FromEnv(env []string) (*Request, error) {
	return New(Input{Env: env}, nil)
}

// FromSpec builds a request from an OCI runtime spec: process.env,
// mounts, and [Privileged]. opts nil means the zero [Options].
func FromSpec(spec *specs.Spec, opts *Options) (*Request, error) {
	in := Input{Privileged: Privileged(spec)}
	if spec != nil {
		in.Mounts = spec.Mounts
		if spec.Process != nil {
			in.Env = spec.Process.Env
		}
	}
	return New(in, opts)
}
