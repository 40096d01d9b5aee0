package cdihook

import (
	"bytes"
	"slices"
)

// ParamsPath is the driver's parameters file, on the host (under its
// procfs) and in the container.
const ParamsPath = "/proc/driver/nvidia/params"

// maxParamsSize bounds the host's params file (a few hundred bytes).
const maxParamsSize = 64 << 10

var (
	modifyOn  = []byte("ModifyDeviceFiles: 1")
	modifyOff = []byte("ModifyDeviceFiles: 0")
)

// DeviceNodeOptions say where [DisableDeviceNodeModification] finds the
// host's driver parameters.
type DeviceNodeOptions struct {
	// ProcRoot is the host's procfs, where driver/nvidia/params is read:
	// a host path, never the container's. A createContainer hook runs
	// before pivot_root, where /proc is still the host's. Empty: "/proc".
	ProcRoot string

	// mask chooses how the copy is mounted (tests); zero: maskAuto.
	mask maskMethod
}

// Skipped says why [DisableDeviceNodeModification] mounted nothing.
type Skipped string

// The reasons for mounting nothing. The first two are the normal case
// of a host that needs no mask; the last two leave a container whose
// libnvidia-ml may create device nodes, which a caller may want to warn
// about.
const (
	// SkippedNoHostParams: the host has no driver params (no driver loaded
	// under ProcRoot).
	SkippedNoHostParams Skipped = "no driver params on the host: nothing to mask"
	// SkippedNotModifying: the host's params do not say
	// ModifyDeviceFiles: 1.
	SkippedNotModifying Skipped = "the host's params do not say ModifyDeviceFiles: 1: nothing to mask"
	// SkippedNoContainerParams: the container has no
	// /proc/driver/nvidia/params to mask.
	SkippedNoContainerParams Skipped = "the container has no driver params: nothing to mask"
	// SkippedNoMountAPI: the kernel lacks the new mount API (Linux 5.12).
	SkippedNoMountAPI Skipped = "the kernel lacks the new mount API (Linux 5.12): params not masked"
)

// DeviceNodeResult says what [DisableDeviceNodeModification] did.
type DeviceNodeResult struct {
	// Masked reports whether the container's params are now a copy saying
	// ModifyDeviceFiles: 0.
	Masked bool
	// Skipped says why nothing was mounted; empty when Masked.
	Skipped Skipped
}

// disableModify returns params with every "ModifyDeviceFiles: 1" line
// saying 0 instead, the rest verbatim, and whether there was one.
func disableModify(params []byte) ([]byte, bool) {
	lines := bytes.SplitAfter(params, []byte("\n"))
	changed := false
	for i, l := range lines {
		if bytes.Equal(bytes.TrimSuffix(l, []byte("\n")), modifyOn) {
			lines[i] = append(slices.Clone(modifyOff), l[len(modifyOn):]...)
			changed = true
		}
	}
	return bytes.Join(lines, nil), changed
}
