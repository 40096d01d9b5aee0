package nvcontainer

import "errors"

// Sentinel errors of Apply's volume rules (see Plan.Apply, "Volumes and
// shared mounts"); an *ApplyError matches them with errors.Is. Apply
// changed nothing when it returns them (what it had done before is taken
// back, as for any error).
var (
	// ErrVolume is matched when Apply would create something (a
	// placeholder, a link, a directory, a temporary file) in a directory
	// that lies on a volume: a mount other than the rootfs's own that
	// holds the host's files (a bind mount of a host directory, a host
	// tmpfs, devtmpfs), where it would stay after the container is gone.
	ErrVolume = errors.New("target in a host volume")
	// ErrSharedMount is matched when Apply would mount onto a target whose
	// mount has shared propagation: the mount would propagate to the
	// mount's peers, on the host, where undo cannot reach them.
	ErrSharedMount = errors.New("target on a mount with shared propagation")
)
