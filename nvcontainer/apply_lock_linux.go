package nvcontainer

import (
	"fmt"
	"os"
	"time"

	"golang.org/x/sys/unix"

	"github.com/go-nvc/nvc/internal/rootfs"
)

// lockPoll is how often lockRootfs tries again while another Apply holds
// the rootfs.
const lockPoll = 2 * time.Millisecond

// lockRootfs serializes Applies on one rootfs directory (two containers
// started from the same rootfs, or a retry racing a configure still
// running): an exclusive flock on the rootfs directory, waited for
// (honouring ctx) and held until every change inside the namespace is kept
// or taken back. It is the first step on the inner undo stack, so it is
// released last, after the undo (or with Discard). A placeholder another
// Apply created is therefore pre-existing for the next one, which never
// records, and so never unlinks, it: unlinking a mountpoint detaches the
// mount in every other namespace.
//
// The lock is advisory and per inode: it binds this package's Applies,
// in any mount namespace, on the same rootfs directory.
func (a *applier) lockRootfs(root *rootfs.Root) error {
	fd, err := unix.Openat(int(root.File().Fd()), ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return stepError(StepEnter, a.ctr.Rootfs, fmt.Errorf("locking the rootfs: %w", &os.PathError{Op: "openat", Path: a.ctr.Rootfs, Err: err}))
	}
	if err := a.waitLock(fd); err != nil {
		unix.Close(fd)
		return err
	}
	unlock := func() { unix.Close(fd) } // closing drops the flock
	a.inner.AddStep(func() error { unlock(); return nil }, unlock)
	return nil
}

// waitLock takes the flock on fd, polling while another Apply holds it,
// until ctx is done.
func (a *applier) waitLock(fd int) error {
	var t *time.Timer
	for {
		err := unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB)
		if err == nil {
			return nil
		}
		if err != unix.EWOULDBLOCK && err != unix.EINTR {
			return stepError(StepEnter, a.ctr.Rootfs, fmt.Errorf("locking the rootfs: %w", os.NewSyscallError("flock", err)))
		}
		if t == nil {
			t = time.NewTimer(lockPoll)
			defer t.Stop()
		} else {
			t.Reset(lockPoll)
		}
		select {
		case <-a.ctx.Done():
			return stepError(StepEnter, a.ctr.Rootfs, fmt.Errorf("waiting for another configure of the same rootfs: %w", a.ctx.Err()))
		case <-t.C:
		}
	}
}
