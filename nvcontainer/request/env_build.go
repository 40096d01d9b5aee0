package request

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/go-nvc/nvc/capabilities"
)

// Environment variables a request is read from.
const (
	EnvVisibleDevices     = "NVIDIA_VISIBLE_DEVICES"
	EnvLegacyGPU          = "NV_GPU"
	EnvDriverCapabilities = "NVIDIA_DRIVER_CAPABILITIES"
	EnvRequirePrefix      = "NVIDIA_REQUIRE_"
	EnvRequireCUDA        = "NVIDIA_REQUIRE_CUDA"
	EnvRequireJetpack     = "NVIDIA_REQUIRE_JETPACK"
	EnvDisableRequire     = "NVIDIA_DISABLE_REQUIRE"
	EnvMIGConfigDevices   = "NVIDIA_MIG_CONFIG_DEVICES"
	EnvMIGMonitorDevices  = "NVIDIA_MIG_MONITOR_DEVICES"
	EnvIMEXChannels       = "NVIDIA_IMEX_CHANNELS"
	EnvCUDAVersion        = "CUDA_VERSION"
)

// environ is a parsed environment; a later entry for a key wins.
type environ map[string]string

// parseEnv keeps the variables the request reads (see requestVar; swarm
// are the config's swarm variables), each at most MaxEnvValue bytes and
// MaxEnvSize together. Every entry must have "=".
func parseEnv(list []string, swarm []string) (environ, error) {
	env := make(environ)
	size := 0
	for i, kv := range list {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return nil, fmt.Errorf("parsing environment entry %d %s: no \"=\"", i, shortQuote(kv))
		}
		if !requestVar(k, swarm) {
			continue
		}
		if err := checkEnvValue(k, v); err != nil {
			return nil, err
		}
		if size += len(kv); size > MaxEnvSize {
			return nil, fmt.Errorf("reading the environment: the NVIDIA_* (and NV_GPU, CUDA_VERSION, swarm) entries, "+
				"up to %s, take more than MaxEnvSize (%d bytes): %w", k, MaxEnvSize, ErrTooLarge)
		}
		env[k] = v
	}
	return env, nil
}

// legacy reports a legacy CUDA image: CUDA_VERSION set, NVIDIA_REQUIRE_CUDA
// unset or empty.
func (e environ) legacy() bool {
	return e[EnvCUDAVersion] != "" && e[EnvRequireCUDA] == ""
}

// builder carries the state of one New call.
type builder struct {
	env  environ
	in   Input
	opts *Options
	req  *Request
}

// build follows the runtime hook's order, so that when several things are
// wrong the first error is the one the hook would have hit.
func (b *builder) build() (*Request, error) {
	mounts := requestsFromMounts(b.in.Mounts, b.opts.AcceptDeviceListAsVolumeMounts)
	b.req.Notes = mounts.notes
	devs, err := b.devices(mounts)
	if err != nil {
		return nil, err
	}
	if devs.Mode == DevicesVoid {
		return &Request{Notes: b.req.Notes}, nil
	}
	b.req.Devices = devs
	steps := []func() error{b.mig, func() error { return b.imex(mounts) }, b.capabilities, b.requirements}
	for _, step := range steps {
		if err := step(); err != nil {
			return nil, err
		}
	}
	b.req.CUDACompatMode = b.opts.cudaCompatMode()
	return b.req, nil
}

// envAllowed applies accept-nvidia-visible-devices-envvar-when-unprivileged.
func (b *builder) envAllowed(name string) bool {
	if b.in.Privileged || !b.opts.IgnoreEnvvarUnprivileged {
		return true
	}
	b.note("ignoring %s in an unprivileged container (accept-nvidia-visible-devices-envvar-when-unprivileged = false)", name)
	return false
}

func (b *builder) note(format string, args ...any) {
	b.req.Notes = append(b.req.Notes, fmt.Sprintf(format, args...))
}

// devices picks the device list: volume mounts if any, else the swarm
// variables, NVIDIA_VISIBLE_DEVICES or NV_GPU, else the legacy default.
func (b *builder) devices(m mountRequests) (Devices, error) {
	if len(m.devices) > 0 {
		d, err := ParseDevices(strings.Join(m.devices, ","))
		if err != nil {
			return Devices{}, fmt.Errorf("reading device volume mounts: %w", err)
		}
		return d, nil
	}
	name, value, set := b.deviceVariable()
	d := Devices{Mode: DevicesVoid}
	if !set && b.env.legacy() {
		d = Devices{Mode: DevicesAll}
	} else if set {
		var err error
		if d, err = ParseDevices(value); err != nil {
			return Devices{}, fmt.Errorf("reading %s: %w", name, err)
		}
	}
	if d.Mode != DevicesVoid && !b.envAllowed(name) {
		return Devices{}, nil
	}
	return d, nil
}

// deviceVariable returns the variable(s) that carry the device list, their
// value, and whether any is set.
func (b *builder) deviceVariable() (name, value string, set bool) {
	var names, values []string
	for _, v := range b.opts.swarmResourceVars() {
		if val, ok := b.env[v]; ok {
			names, values = append(names, v), append(values, val)
		}
	}
	if len(names) > 0 {
		return strings.Join(names, ","), strings.Join(values, ","), true
	}
	if val, ok := b.env[EnvVisibleDevices]; ok {
		return EnvVisibleDevices, val, true
	}
	if val, ok := b.env[EnvLegacyGPU]; ok {
		// nvidia-docker accepted NV_GPU="0 1" as well as "0,1".
		return EnvLegacyGPU, strings.ReplaceAll(val, " ", ","), true
	}
	return EnvVisibleDevices, "", false
}

// mig reads NVIDIA_MIG_CONFIG_DEVICES and NVIDIA_MIG_MONITOR_DEVICES.
func (b *builder) mig() error {
	for _, v := range []struct {
		name string
		dst  *string
	}{{EnvMIGConfigDevices, &b.req.MIGConfig}, {EnvMIGMonitorDevices, &b.req.MIGMonitor}} {
		val := b.env[v.name]
		if val != "" && !b.in.Privileged {
			return fmt.Errorf("reading %s %s: %w", v.name, shortQuote(val), ErrUnprivileged)
		}
		*v.dst = val
	}
	return nil
}

// imex reads the IMEX channels: volume mounts first, else
// NVIDIA_IMEX_CHANNELS under the same privilege rule as devices.
func (b *builder) imex(m mountRequests) error {
	if b.opts.IgnoreIMEXChannelRequests {
		return nil
	}
	if len(m.imex) > MaxIMEXChannels {
		return fmt.Errorf("reading IMEX channel volume mounts: %d channels, more than MaxIMEXChannels (%d): %w",
			len(m.imex), MaxIMEXChannels, ErrTooLarge)
	}
	if len(m.imex) > 0 {
		b.req.IMEXChannels = m.imex
		return nil
	}
	val, ok := b.env[EnvIMEXChannels]
	if !ok {
		return nil
	}
	chans, err := ParseIMEXChannels(val)
	if err != nil {
		return fmt.Errorf("reading %s: %w", EnvIMEXChannels, err)
	}
	if len(chans) > 0 && b.envAllowed(EnvIMEXChannels) {
		b.req.IMEXChannels = chans
	}
	return nil
}

// capabilities applies the hook's NVIDIA_DRIVER_CAPABILITIES rule.
func (b *builder) capabilities() error {
	supported, err := b.opts.supportedCapabilities()
	if err != nil {
		return err
	}
	val, set := b.env[EnvDriverCapabilities]
	switch {
	case !set && b.env.legacy():
		b.req.Capabilities = supported
		return nil
	case strings.Trim(val, " ,") == "":
		b.req.Capabilities = capabilities.HookDefault.Intersect(supported)
		return nil
	}
	caps, err := requestedCapabilities(val, supported)
	if err != nil {
		return fmt.Errorf("reading %s: %w", EnvDriverCapabilities, err)
	}
	b.req.Capabilities = caps
	return nil
}

// requestedCapabilities parses a non-empty list: "all" anywhere means every
// supported class (the hook accepts "all,foo"); otherwise every class must
// be known and supported.
func requestedCapabilities(val string, supported capabilities.Set) (capabilities.Set, error) {
	for item := range strings.SplitSeq(val, ",") {
		if strings.TrimSpace(item) == "all" {
			return supported, nil
		}
	}
	caps, err := capabilities.Parse(val)
	if err != nil {
		return 0, err
	}
	if extra := caps.Minus(supported); extra != 0 {
		return 0, fmt.Errorf("capabilities %q in %q are not in supported-driver-capabilities %q",
			extra.String(), val, supported.String())
	}
	return caps, nil
}

// requirements collects NVIDIA_REQUIRE_* in sorted key order, then the
// legacy image's cuda>=X.Y.
func (b *builder) requirements() error {
	b.req.Jetpack = b.env[EnvRequireJetpack]
	disable, _ := strconv.ParseBool(b.env[EnvDisableRequire])
	if disable || b.opts.DisableRequire {
		b.req.DisableRequire = true
		return nil
	}
	var keys []string
	for k := range b.env {
		if strings.HasPrefix(k, EnvRequirePrefix) && !strings.HasPrefix(k, EnvRequireJetpack) {
			keys = append(keys, k)
		}
	}
	if n := len(keys) + legacyRequirement(b.env); n > MaxRequirements {
		return fmt.Errorf("reading %s*: %d requirements, more than MaxRequirements (%d): %w: %w",
			EnvRequirePrefix, n, MaxRequirements, ErrTooManyRequirements, ErrTooLarge)
	}
	slices.Sort(keys)
	for _, k := range keys {
		b.req.Requirements = append(b.req.Requirements, b.env[k])
	}
	if !b.env.legacy() {
		return nil
	}
	mm, err := cudaMajorMinor(b.env[EnvCUDAVersion])
	if err != nil {
		return fmt.Errorf("reading %s %s: %w", EnvCUDAVersion, shortQuote(b.env[EnvCUDAVersion]), err)
	}
	b.req.Requirements = append(b.req.Requirements, "cuda>="+mm)
	return nil
}

// legacyRequirement is 1 for a legacy image, whose CUDA_VERSION adds a
// requirement, else 0.
func legacyRequirement(e environ) int {
	if e.legacy() {
		return 1
	}
	return 0
}
