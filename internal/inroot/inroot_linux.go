// Package inroot opens a path inside a directory as if that directory were
// "/": symlinks, absolute or with "..", and ".." itself never lead out of
// it. It uses openat2 with RESOLVE_IN_ROOT (Linux 5.6+), and
// filepath-securejoin's userspace walk where the kernel lacks openat2.
//
// It is the shared primitive of the read-only walkers (ldcache's scan of a
// root, driver's look at a driver root); internal/rootfs, which also
// creates and records, has its own resolver with the same rules.
package inroot

import (
	"errors"
	"os"
	"sync"

	pathrs "github.com/cyphar/filepath-securejoin/pathrs-lite"
	"golang.org/x/sys/unix"
)

// retries bounds how often Openat2 repeats a walk the kernel gave up on.
const retries = 16

// HaveOpenat2 reports whether the kernel has openat2, probed once per
// process.
var HaveOpenat2 = sync.OnceValue(func() bool {
	fd, err := unix.Openat2(unix.AT_FDCWD, "/", &unix.OpenHow{Flags: unix.O_PATH | unix.O_CLOEXEC})
	if err == nil {
		unix.Close(fd)
	}
	return !errors.Is(err, unix.ENOSYS)
})

// Open opens unsafePath inside dir with flags (O_CLOEXEC is added):
// Openat2 where the kernel has it, Emulated otherwise.
func Open(dir *os.File, unsafePath string, flags int) (int, error) {
	if HaveOpenat2() {
		return Openat2(int(dir.Fd()), unsafePath, flags, 0)
	}
	return Emulated(dir, unsafePath, flags)
}

// Openat2 is openat2(dirfd, unsafePath) with RESOLVE_IN_ROOT,
// RESOLVE_NO_MAGICLINKS and the further resolve flags given, tried again while it fails with EAGAIN or EINTR:
// the kernel gives up on a walk through ".." when a rename or mount
// happened anywhere meanwhile, and asks the caller to retry. The error is
// the bare errno.
func Openat2(dirfd int, unsafePath string, flags int, resolve uint64) (int, error) {
	how := &unix.OpenHow{
		Flags:   uint64(flags | unix.O_CLOEXEC),
		Resolve: unix.RESOLVE_IN_ROOT | unix.RESOLVE_NO_MAGICLINKS | resolve,
	}
	for range retries {
		fd, err := unix.Openat2(dirfd, unsafePath, how)
		if err != unix.EAGAIN && err != unix.EINTR {
			return fd, err
		}
	}
	return -1, unix.EAGAIN
}

// Emulated resolves unsafePath inside dir with filepath-securejoin's
// userspace walk and, unless flags ask for O_PATH, reopens the handle
// through procfs with flags. The error is filepath-securejoin's.
func Emulated(dir *os.File, unsafePath string, flags int) (int, error) {
	h, err := pathrs.OpenatInRoot(dir, unsafePath)
	if err != nil {
		return -1, err
	}
	defer h.Close()
	if flags&unix.O_PATH != 0 {
		return DupCloexec(int(h.Fd()))
	}
	f, err := pathrs.Reopen(h, flags)
	if err != nil {
		return -1, err
	}
	defer f.Close()
	return DupCloexec(int(f.Fd()))
}

// DupCloexec duplicates fd with FD_CLOEXEC set in the same call, so that a
// descriptor into the root never leaks into a process forked meanwhile
// (dup(2) would leave it inheritable).
func DupCloexec(fd int) (int, error) {
	return unix.FcntlInt(uintptr(fd), unix.F_DUPFD_CLOEXEC, 0)
}
