package request

import (
	"errors"
	"fmt"
	"strings"

	"github.com/go-nvc/nvc/capabilities"
)

// ErrInvalidOptions is matched (with errors.Is) when an [Options] value
// cannot be used, e.g. an unknown capability in SupportedDriverCapabilities.
var ErrInvalidOptions = errors.New("invalid request options")

// Options are the runtime hook's settings that change how a request is
// read: the NVIDIA Container Toolkit's config.toml keys of the same names
// (package toolkit fills them from a config file). The zero Options are
// the toolkit's defaults; a nil *Options means the zero Options.
type Options struct {
	// AcceptDeviceListAsVolumeMounts reads the device list from mounts of
	// /dev/null at /var/run/nvidia-container-devices/<device>, which take
	// the place of NVIDIA_VISIBLE_DEVICES
	// (accept-nvidia-visible-devices-as-volume-mounts). False: mounts are
	// ignored.
	AcceptDeviceListAsVolumeMounts bool
	// IgnoreEnvvarUnprivileged ignores the device request in the
	// environment of a container without CAP_SYS_ADMIN (the negation of
	// accept-nvidia-visible-devices-envvar-when-unprivileged). False: the
	// environment is honoured.
	IgnoreEnvvarUnprivileged bool
	// SwarmResource is a comma-separated list of variables read before
	// NVIDIA_VISIBLE_DEVICES (swarm-resource). Empty: none.
	SwarmResource string
	// SupportedDriverCapabilities limits the capabilities a container may
	// ask for (supported-driver-capabilities): a capability list, "all",
	// or "none". Empty: all.
	SupportedDriverCapabilities string
	// DisableRequire turns every NVIDIA_REQUIRE_* check off
	// (disable-require).
	DisableRequire bool
	// IgnoreIMEXChannelRequests ignores NVIDIA_IMEX_CHANNELS and IMEX
	// volume mounts (features.ignore-imex-channel-requests).
	IgnoreIMEXChannelRequests bool
	// CUDACompatMode is modes.legacy.cuda-compat-mode: empty or "ldconfig"
	// (the default), "mount", "hook" or "disabled"; see
	// [Request.CUDACompatMode] for how it maps.
	CUDACompatMode string
	// AllowCUDACompatLibsFromContainer is
	// features.allow-cuda-compat-libs-from-container: with a
	// CUDACompatMode the hook does not know, the CLI's default is kept
	// instead of disabling.
	AllowCUDACompatLibsFromContainer bool
}

// Validate reports whether o can be used; the error names the setting.
func (o *Options) Validate() error {
	_, err := o.supportedCapabilities()
	return err
}

// supportedCapabilities parses SupportedDriverCapabilities; "all" and
// empty mean every class, "none" means none.
func (o *Options) supportedCapabilities() (capabilities.Set, error) {
	v := o.SupportedDriverCapabilities
	switch strings.TrimSpace(v) {
	case "":
		return capabilities.All, nil
	case "none":
		return 0, nil
	}
	s, err := capabilities.Parse(v)
	if err != nil {
		return 0, fmt.Errorf("supported-driver-capabilities: %w: %w", err, ErrInvalidOptions)
	}
	return s, nil
}

// swarmResourceVars splits SwarmResource on commas.
func (o *Options) swarmResourceVars() []string {
	var out []string
	for v := range strings.SplitSeq(o.SwarmResource, ",") {
		if v = strings.TrimSpace(v); v != "" {
			out = append(out, v)
		}
	}
	return out
}

// cudaCompatMode maps CUDACompatMode as the hook does: empty is the
// default, ldconfig; "hook" and "disabled" disable; any other value
// disables unless AllowCUDACompatLibsFromContainer, which leaves the CLI's
// default.
func (o *Options) cudaCompatMode() CUDACompatMode {
	switch m := o.CUDACompatMode; m {
	case "":
		return CompatLdconfig
	case "ldconfig", "mount":
		return CUDACompatMode(m)
	case "disabled", "hook":
		return CompatDisabled
	}
	if o.AllowCUDACompatLibsFromContainer {
		return CompatDefault
	}
	return CompatDisabled
}
