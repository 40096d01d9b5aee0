package nvcontainer

import (
	"github.com/go-nvc/nvc/internal/mount"
	"github.com/go-nvc/nvc/internal/rootfs"
)

// How a retry converges after an interrupted Apply: see the package
// doc's "Interrupted runs, retries and shared rootfs".

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
