package nvcontainer

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
