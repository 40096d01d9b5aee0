package nvcontainer

import (
	"github.com/go-nvc/nvc/internal/mount"
	"github.com/go-nvc/nvc/internal/rootfs"
)

// What an interrupted Apply leaves, and how the next one converges.
//
// Apply takes back everything it changed when it fails or its context
// ends, but a process killed part-way (SIGKILL, an OOM kill, a runtime's
// hook timeout) runs no undo. What it can leave is bounded to the
// container: mounts in the container's mount namespace, placeholders,
// parent directories and symlinks in its rootfs, the loader cache it
// swapped in (and the previous one under a hidden ".ld.so.cache.nvc-XXXX"
// name), device cgroup rules on the container's own cgroup. Nothing is
// left on the host: every host-side change is one of those rules, and
// nothing else is mounted or written outside the container.
//
// Running Apply again with the same plan converges to what a single clean
// run gives:
//   - a target that already shows its source as Apply would mount it (the
//     same file, st_dev and st_ino, on a mount with the same ro, nosuid,
//     nodev and noexec flags) is left as it is instead of stacking another
//     mount (mount.Source.Covers, on the fstat the target was opened with);
//   - a tmpfs that looks like the plan's (tmpfs, mounted right at the
//     target, with its mode and flags) is detached, with the mounts inside
//     it, before the new one is attached; this is not taken back if the
//     retry fails;
//   - stale ".NAME.nvc-XXXXXXXXXXXX" temporaries in the directories Apply
//     writes or relinks in are removed (rootfs.Options.RemoveStaleTemps);
//   - existing placeholders, directories and links are reused as they are;
//   - cgroup rules already present are not added again.

// covered reports whether the target e already shows src as Apply would
// mount it; then Apply does not mount it again.
func covered(e *rootfs.Entry, src *mount.Source) bool {
	st := e.Stat()
	return src.Covers(&st, e.Fd())
}

// coveredAt is covered for the entry at target, for a target whose
// placeholder could not be made because what is mounted there has
// another type (a socket source, mounted on a regular file).
func coveredAt(root *rootfs.Root, target string, src *mount.Source) bool {
	e, err := root.Lookup(target)
	if err != nil {
		return false
	}
	defer e.Close()
	return covered(e, src)
}

// dropLeftTmpfs detaches a tmpfs an interrupted Apply left at the tmpfs
// target e, and returns the target resolved again (what was under it);
// e itself when there is none.
func (a *applier) dropLeftTmpfs(root *rootfs.Root, e *rootfs.Entry, tm *tmpfsMount) (*rootfs.Entry, error) {
	if !tm.src.LooksLeftAt(e.Fd()) {
		return e, nil
	}
	err := mount.DetachAt(e.Fd(), tm.t.Target)
	e.Close()
	if err != nil {
		return nil, err
	}
	root.ForgetDirs()
	return root.MkdirAll(tm.t.Target, 0o555)
}
