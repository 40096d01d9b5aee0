package nvcontainer

import "errors"

// Volumes and shared mounts. A runtime mounts things into the rootfs
// besides the image: its own fresh filesystems (/proc, /sys, a tmpfs on
// /dev, /run, /dev/shm) and the user's volumes, host directories or
// filesystems bind-mounted in (`-v /srv/libs:/usr/lib/x86_64-linux-gnu`).
// What Apply creates in a volume lands in the host's directory and stays
// there after the container is gone; a mount made on a volume with shared
// propagation (`:rshared`) propagates to its peer on the host, where undo
// cannot reach it. Apply reads the mount table of the container's
// namespace once (on the confined thread) and follows two rules; a
// refusal fails Apply like any other error, so what it had already
// changed is taken back and the container is left as it was.
//
//  1. Entries (directories, placeholders, links, device nodes, the
//     temporaries renamed into place) are created only in a directory on
//     the rootfs's own mount; on a procfs or sysfs (which keep nothing);
//     or on a tmpfs the runtime made for the container: mounted whole (its
//     root is the mount's root) and mounted nowhere in the caller's (the
//     host's) namespace, like runc's /dev or podman's /run. Anything else
//     is a volume and gives ErrVolume: a bind mount of a host directory, a
//     host tmpfs given whole (`-v /run:/run`), devtmpfs (`-v /dev:/dev`),
//     a mount Apply made itself from the host (a directory source), or
//     one that appeared after Apply read the table. Apply checks the
//     directory each entry goes into, just before creating it. Mounting
//     onto a file, directory or device node that is already there in a
//     volume is allowed: that mount lives in the container's namespace
//     only and leaves nothing on the host (unless rule 2 applies).
//  2. Nothing is mounted onto a target whose mount (the mount the target
//     is on, or the mount that is the target) has shared propagation
//     (mountinfo's shared:N): ErrSharedMount. Apply does not make the
//     mount private instead, which would change the user's volume. A
//     runtime that makes the rootfs mount itself shared (Docker does when
//     any volume is rshared; runc's and crun's default, rslave, is not)
//     has every target refused: give such volumes rslave propagation.
//
// In ModeRootfsOnly Apply works in the caller's own namespace, whose
// mounts are the caller's: rule 1 allows only the rootfs's own mount (and
// procfs, sysfs), and rule 2 is not checked. In ModeStandalone the caller
// is inside the container and cannot see the host's mounts: rule 1 takes
// any tmpfs mounted whole for the container's.
var (
	// ErrVolume is matched when Apply would create something (a
	// placeholder, a link, a directory, a temporary file) in a directory
	// that lies on a volume: a mount other than the rootfs's own that
	// holds the host's files (a bind mount of a host directory, a host
	// tmpfs, devtmpfs), where it would stay after the container is gone.
	// The error names the directory and the volume's mount point inside
	// the container.
	ErrVolume = errors.New("target in a host volume")
	// ErrSharedMount is matched when Apply would mount onto a target whose
	// mount has shared propagation: the mount would propagate to the
	// mount's peers, on the host, where undo cannot reach them. The error
	// names the target and the mount's mount point inside the container.
	ErrSharedMount = errors.New("target on a mount with shared propagation")
)
