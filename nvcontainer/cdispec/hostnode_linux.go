package cdispec

import (
	"os"

	"golang.org/x/sys/unix"
	specs "tags.cncf.io/container-device-interface/specs-go"
)

// hostNodeAttrs fills n's FileMode and GID from its host node, as the
// NVIDIA Container Toolkit does when it writes a spec: a runtime creates
// the container's node with that mode and group. The owner is left out on
// purpose: a CDI runtime then gives the node to the container's user
// (CDI's DeviceNode docs), which a root-owned node would deny a
// non-root user. A group of 0 is left out too (the runtime's default is
// the container user's group). Nothing is filled when the host path is no
// character device of n's numbers (a simulated host's stand-in file).
func hostNodeAttrs(n *specs.DeviceNode) {
	var st unix.Stat_t
	if err := unix.Stat(n.HostPath, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFCHR ||
		int64(unix.Major(st.Rdev)) != n.Major || int64(unix.Minor(st.Rdev)) != n.Minor {
		return
	}
	if perm := os.FileMode(st.Mode & 0o777); perm != 0 {
		n.FileMode = &perm
	}
	if st.Gid != 0 {
		gid := st.Gid
		n.GID = &gid
	}
}
