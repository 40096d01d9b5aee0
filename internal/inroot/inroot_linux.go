// Package inroot opens a path inside a directory as if that directory were
// "/": symlinks, absolute or with "..", and ".." itself never lead out of
// it. It uses openat2 with RESOLVE_IN_ROOT (Linux 5.6+), and
// filepath-securejoin's userspace walk where the kernel lacks openat2.
//
// It is the one in-root opener of the project: ldcache's scan of a root,
// driver's look at a driver root, nvcontainer's inspection of an image
// for a plan, and internal/rootfs (which adds creation and undo on top)
// all resolve through it.
//
// It is also the one reader of files that may not be what they claim
// (regular_linux.go): [ReadRegular], [OpenRegular], [ReopenRegular],
// [ReadRegularFile], [OpenRegularAt] and [Reopener] open a file O_PATH,
// fstat that descriptor, refuse anything but a regular file with
// [ErrNotRegular] (the file never opened: no device driver's open runs,
// no FIFO blocks), and only then open it for reading through the
// descriptor, /proc/thread-self/fd/N. ldcache (libraries, ld.so.conf and
// includes, musl path file, ld.so.cache), internal/rootfs's OpenFile
// (the CDI hook's compat configuration), devices and the CDI hook (the
// driver's params) and driver (driver root files) read through them.
package inroot

import (
	"errors"
	"os"
	"strings"
	"sync"

	pathrs "github.com/cyphar/filepath-securejoin/pathrs-lite"
	"golang.org/x/sys/unix"
)

// retries bounds how often Openat2 repeats a walk the kernel gave up on
// (filepath-securejoin allows as many): a rootfs whose directories are
// renamed in a loop during Apply must not make it fail.
const retries = 128

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
// through procfs with flags. With O_NOFOLLOW a symlink in the last
// component is not followed, as with openat2: the parent is resolved and
// the last component opened relative to it. The error is
// filepath-securejoin's, or the bare errno of that last open.
func Emulated(dir *os.File, unsafePath string, flags int) (int, error) {
	if flags&unix.O_NOFOLLOW != 0 {
		if parent, base, ok := lastName(unsafePath); ok {
			return emulatedNoFollow(dir, parent, base, flags)
		}
	}
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

// lastName splits unsafePath into its parent and a last component that
// could be a symlink; ok is false when there is none ("/", a trailing
// slash, "." or "..").
func lastName(unsafePath string) (parent, base string, ok bool) {
	i := strings.LastIndexByte(unsafePath, '/')
	parent, base = unsafePath[:i+1], unsafePath[i+1:]
	if base == "" || base == "." || base == ".." {
		return "", "", false
	}
	if parent == "" {
		parent = "."
	}
	return parent, base, true
}

func emulatedNoFollow(dir *os.File, parent, base string, flags int) (int, error) {
	pfd, err := Emulated(dir, parent, unix.O_PATH|unix.O_DIRECTORY)
	if err != nil {
		return -1, err
	}
	defer unix.Close(pfd)
	return unix.Openat(pfd, base, flags|unix.O_CLOEXEC, 0)
}

// DupCloexec duplicates fd with FD_CLOEXEC set in the same call, so that a
// descriptor into the root never leaks into a process forked meanwhile
// (dup(2) would leave it inheritable).
func DupCloexec(fd int) (int, error) {
	return unix.FcntlInt(uintptr(fd), unix.F_DUPFD_CLOEXEC, 0)
}
