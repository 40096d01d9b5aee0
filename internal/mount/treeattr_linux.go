package mount

import (
	"errors"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"
)

// errNoTreeAttr says open_tree_attr was not used: the caller clones with
// open_tree and sets the attributes with mount_setattr.
var errNoTreeAttr = errors.New("open_tree_attr not used")

// noTreeAttr is set once the kernel (or a seccomp filter) has refused
// open_tree_attr as unknown or not permitted: later clones go straight to
// open_tree and mount_setattr.
var noTreeAttr atomic.Bool

// openTreeAttr clones name in dir (open_tree flags, OPEN_TREE_CLONE
// included) as a detached mount with attr set, in one system call:
// open_tree_attr, Linux 6.15. With no attribute to set, or where the
// call is missing (ENOSYS), refused (EPERM, as a seccomp filter may answer
// for a call it does not know; open_tree then meets a real lack of
// privilege itself) or its arguments not understood (EINVAL), it returns
// errNoTreeAttr. Other errors (ENOENT, ELOOP …) are open_tree's own.
func openTreeAttr(dir int, name string, flags int, attr Attr) (int, error) {
	if attr == 0 || noTreeAttr.Load() {
		return -1, errNoTreeAttr
	}
	p, err := unix.BytePtrFromString(name)
	if err != nil {
		return -1, err
	}
	ma := unix.MountAttr{Attr_set: uint64(attr)}
	fd, _, errno := unix.Syscall6(unix.SYS_OPEN_TREE_ATTR, uintptr(dir), uintptr(unsafe.Pointer(p)), uintptr(flags),
		uintptr(unsafe.Pointer(&ma)), unsafe.Sizeof(ma), 0)
	switch errno {
	case 0:
		return int(fd), nil
	case unix.ENOSYS, unix.EPERM:
		noTreeAttr.Store(true)
		return -1, errNoTreeAttr
	case unix.EINVAL:
		return -1, errNoTreeAttr
	}
	return -1, errno
}
