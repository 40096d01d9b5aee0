package nvcontainer

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
	// capabilities); NewRequest applies the hook's rule for an empty
	// NVIDIA_DRIVER_CAPABILITIES before this field is set.
	Capabilities capabilities.Set `json:"capabilities"`
	// Requirements are NVIDIA_REQUIRE_* expressions (see CheckRequirements),
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

// RequestInput is what a request is built from.
type RequestInput struct {
	// Env is the container's environment, "KEY=value" entries; a later
	// entry for a key wins. An entry without "=" is an error.
	Env []string
	// Mounts are the spec's mounts. They matter only with
	// Config.AcceptDeviceListAsVolumeMounts; nil: none.
	Mounts []specs.Mount
	// Privileged is whether the container holds CAP_SYS_ADMIN in its
	// bounding set. False refuses NVIDIA_MIG_* and, with
	// Config.IgnoreEnvvarUnprivileged, ignores environment requests.
	Privileged bool
}

// NewRequest builds a request with the rules of nvidia-container-runtime-hook
// (see the package documentation). cfg nil means [DefaultConfig].
//
// Errors name the variable and value at fault: an environment entry without
// "=", an invalid device list or IMEX channel, NVIDIA_MIG_* in an
// unprivileged container ([ErrUnprivileged]), an unknown or unsupported
// capability, an invalid CUDA_VERSION on a legacy image, a request past
// one of the bounds ([MaxDevices], [MaxIMEXChannels], [MaxRequirements],
// [MaxEnvValue], [MaxEnvSize]: [ErrRequestTooLarge]). Only the variables
// a request reads are looked at beyond the "=" check.
func NewRequest(in RequestInput, cfg *Config) (*Request, error) {
	if cfg == nil {
		cfg = DefaultConfig()
	}
	env, err := parseEnv(in.Env, cfg.swarmResourceVars())
	if err != nil {
		return nil, err
	}
	b := &builder{env: env, in: in, cfg: cfg, req: &Request{}}
	return b.build()
}

// RequestFromEnv builds a request from an environment alone, with the
// default config, for an unprivileged container (NVIDIA_MIG_* refused).
func RequestFromEnv(env []string) (*Request, error) {
	return NewRequest(RequestInput{Env: env}, nil)
}

// RequestFromSpec builds a request from an OCI runtime spec: process.env,
// mounts, and [Privileged]. cfg nil means [DefaultConfig].
func RequestFromSpec(spec *specs.Spec, cfg *Config) (*Request, error) {
	in := RequestInput{Privileged: Privileged(spec)}
	if spec != nil {
		in.Mounts = spec.Mounts
		if spec.Process != nil {
			in.Env = spec.Process.Env
		}
	}
	return NewRequest(in, cfg)
}

// Container is the container a request is for, as the runtime hook sees it.
type Container struct {
	// PID is the container's process as seen on the host; 0: unknown.
	// [Plan.Apply] requires one, alive and in a mount namespace other
	// than the caller's, unless Mode says otherwise.
	PID int `json:"pid"`
	// Rootfs is the host path of the container's root filesystem.
	Rootfs string `json:"rootfs"`
	// Mode says where [Plan.Apply] works; the zero value, ModeProcess,
	// is the safe one: in PID's own mount namespace.
	Mode Mode `json:"mode,omitempty"`
}

// Mode is how [Plan.Apply] finds the mount namespace it changes. Only the
// named modes other than ModeProcess let it work in the caller's own
// namespace, so a PID of 0 or a host process never does so by accident.
type Mode string

const (
	// ModeProcess (the zero value) applies in the mount namespace of the
	// container's process PID: it must be a live process (not a zombie)
	// whose mount namespace is neither the caller's nor that of pid 1
	// (init's, the host's). Apply pins the process and its namespace once
	// and acts only through them; anything else is an error matching
	// [ErrInvalidPID]. This is the mode of OCI hooks (prestart,
	// createRuntime) and of nvidia-container-cli --pid.
	ModeProcess Mode = ""
	// ModeRootfsOnly applies in the caller's own mount namespace on the
	// directory Rootfs, for a runtime that prepares a rootfs before it
	// starts the container's process. PID must be 0, and the plan may have
	// no device cgroup rules ([ErrNoProcess]): give the devices to the
	// runtime instead.
	ModeRootfsOnly Mode = "rootfs-only"
	// ModeStandalone is libnvidia-container's standalone mode: the caller
	// runs inside the container's mount namespace (an LXC-style hook,
	// nvidia-container-cli configure without --pid) and PID is the
	// container's process, found in ApplyOptions.ProcRoot. PID must be a
	// live process whose mount namespace is the caller's; Apply works
	// there and gives PID's device cgroup the plan's rules.
	ModeStandalone Mode = "standalone"
)
