package ns

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"

	"golang.org/x/sys/unix"

	"github.com/go-nvc/nvc/internal/sentinel"
)

// Namespace is a mount namespace to run functions in, held open by a file
// descriptor, or the caller's own namespace (see [Current]).
type Namespace struct {
	file *os.File // nil: no setns
}

// Open opens the mount namespace file at path (such as /proc/PID/ns/mnt)
// and checks that it is one.
func Open(path string) (*Namespace, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		if perr := sentinel.Permission("opening mount namespace", "CAP_SYS_PTRACE", err); perr != err {
			return nil, perr
		}
		return nil, fmt.Errorf("opening mount namespace: %w", err)
	}
	if err := checkMountNS(f); err != nil {
		f.Close()
		return nil, err
	}
	return &Namespace{file: f}, nil
}

// OpenPID opens the mount namespace of process pid through the procfs
// mounted at procRoot ("" means /proc).
func OpenPID(procRoot string, pid int) (*Namespace, error) {
	if procRoot == "" {
		procRoot = "/proc"
	}
	return Open(filepath.Join(procRoot, strconv.Itoa(pid), "ns", "mnt"))
}

// FromFile returns a Namespace for an already open mount namespace file. It
// duplicates f's descriptor; the caller still owns f.
func FromFile(f *os.File) (*Namespace, error) {
	fd, err := unix.FcntlInt(f.Fd(), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("duplicating namespace fd of %q: %w", f.Name(), os.NewSyscallError("fcntl", err))
	}
	dup := os.NewFile(uintptr(fd), f.Name())
	if err := checkMountNS(dup); err != nil {
		dup.Close()
		return nil, err
	}
	return &Namespace{file: dup}, nil
}

// Current returns the caller's own mount namespace: Run does no setns but
// still confines the function to a thread with its own filesystem context.
func Current() *Namespace {
	return &Namespace{}
}

// IsCurrent reports whether n is the caller's namespace made by [Current]
// (not whether an opened namespace happens to equal the caller's).
func (n *Namespace) IsCurrent() bool {
	return n.file == nil
}

// IsCaller reports whether n is the calling thread's own mount namespace:
// [Current], or an opened namespace file with the same device and inode
// as /proc/thread-self/ns/mnt. A process's namespace that is the caller's
// is one Run would not leave: a host process, for a caller on the host.
func (n *Namespace) IsCaller() (bool, error) {
	if n.file == nil {
		return true, nil
	}
	runtime.LockOSThread() // thread-self is this thread until the stat is done
	defer runtime.UnlockOSThread()
	return n.SameAs("/proc/thread-self/ns/mnt")
}

// SameAs reports whether n, an opened namespace, is the namespace the
// file at path (such as /proc/1/ns/mnt) refers to: same device and inode.
// For [Current] it is an error.
func (n *Namespace) SameAs(path string) (bool, error) {
	if n.file == nil {
		return false, fmt.Errorf("comparing the current mount namespace with %q: not an opened namespace", path)
	}
	var held, other unix.Stat_t
	if err := unix.Fstat(int(n.file.Fd()), &held); err != nil {
		return false, fmt.Errorf("comparing mount namespace %q with %q: %w", n.file.Name(), path, os.NewSyscallError("fstat", err))
	}
	if err := unix.Stat(path, &other); err != nil {
		return false, fmt.Errorf("comparing mount namespace %q with %q: %w", n.file.Name(), path, &os.PathError{Op: "stat", Path: path, Err: err})
	}
	return held.Dev == other.Dev && held.Ino == other.Ino, nil
}

// String names the namespace: its file name, or "current".
func (n *Namespace) String() string {
	if n.file == nil {
		return "current"
	}
	return n.file.Name()
}

// Close releases the namespace's descriptor; closing [Current] does nothing.
func (n *Namespace) Close() error {
	if n.file == nil {
		return nil
	}
	return n.file.Close()
}

func checkMountNS(f *os.File) error {
	typ, err := unix.IoctlRetInt(int(f.Fd()), unix.NS_GET_NSTYPE)
	if err != nil {
		return fmt.Errorf("checking namespace type of %q: %w: %w", f.Name(), ErrNotMountNamespace, os.NewSyscallError("ioctl NS_GET_NSTYPE", err))
	}
	if typ != unix.CLONE_NEWNS {
		return fmt.Errorf("checking namespace type of %q: %w (type %#x)", f.Name(), ErrNotMountNamespace, typ)
	}
	return nil
}
