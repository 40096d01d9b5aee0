// Package mount attaches host files, directories and fresh tmpfs mounts
// inside a container's mount namespace, and takes them back.
//
// The work is split the way the kernel allows it. In the host namespace,
// [OpenSource] opens the host file and, with the new mount API, clones it
// into a detached mount (open_tree(OPEN_TREE_CLONE)) whose attributes
// (read-only, nosuid, nodev, noexec) are set before anything can see it:
// in the same open_tree_attr call on Linux 6.15 and later, with
// mount_setattr before. Then, on a thread confined to the container's mount
// namespace (internal/ns), [Source.Attach] moves it onto a target opened
// inside the rootfs (internal/rootfs) with move_mount on both descriptors:
// neither side is named by a path, so neither can be swapped under us.
// [OpenSourceFd] does the same for a file already opened by descriptor,
// such as one of the container's own files resolved inside its rootfs: it
// is called on the confined thread, as open_tree clones only mounts of the
// caller's namespace.
//
// Kernels older than 5.12 lack mount_setattr. There [Legacy] does what
// libnvidia-container does: inside the container's namespace, which before
// pivot_root still sees host paths, it binds the source by path onto the
// target's /proc/thread-self/fd/N magic link, then remounts the bind with
// the flags. It checks that the path found in the container's namespace is
// the very file opened on the host, before and after binding, and finds
// the magic link in a private procfs (pathrs-lite), not in the container's
// /proc. [Options].Method selects the method, so tests exercise both on
// one kernel. Both methods add the requested flags to those of the source
// mount; neither clears any.
//
// [NewTmpfs] builds a tmpfs (fsopen, fsconfig, fsmount) and populates it
// through its mount descriptor before it becomes visible, as the
// /proc/driver/nvidia mask needs.
//
// [Mount.Detach] unmounts (MNT_DETACH) exactly the mount that was
// attached, through its own descriptor. Errors are *[Error] values that
// carry the operation, source, target and flags.
//
// Needs: Linux, CAP_SYS_ADMIN; the new mount API needs Linux 5.12 (Legacy
// works on older kernels). Attach and Detach must run inside
// ns.Namespace.Run: they change the thread's working directory.
package mount
