package mount

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/cyphar/filepath-securejoin/pathrs-lite/procfs"
	"golang.org/x/sys/unix"

	"github.com/go-nvc/nvc/internal/inroot"
	"github.com/go-nvc/nvc/internal/ns"
	"github.com/go-nvc/nvc/internal/undo"
)

// Mount is an attached mount, held by a descriptor of its root.
type Mount struct {
	fd     int
	file   *os.File // made on demand by Root
	id     uint64   // found on demand by ID
	source string
	target string
}

func newMount(fd int, source, target string) *Mount {
	return &Mount{fd: fd, source: source, target: target}
}

// mountID is the kernel's ID of the mount fd is on, 0 if unknown.
func mountID(fd int) uint64 {
	id, _ := inroot.MountID(fd, "")
	return id
}

// reopenMounted opens what is now mounted on name in dir, and checks that
// it is a new mount, not the target itself.
func reopenMounted(dir int, name string, target int, source, shown string) (*Mount, error) {
	fd, err := unix.Openat(dir, name, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &Error{Op: "open mounted", Source: source, Target: shown, Err: err}
	}
	m := newMount(fd, source, shown)
	if id := m.ID(); id != 0 && id == mountID(target) {
		m.Close()
		return nil, &Error{Op: "mount", Source: source, Target: shown, Err: fmt.Errorf("nothing mounted on the target: %w", ErrSourceMismatch)}
	}
	return m, nil
}

// Root is the descriptor of the mount's root: for a tmpfs, the directory
// to open its entries (such as gpus/<busid> placeholders) from. The Mount
// keeps ownership.
func (m *Mount) Root() *os.File {
	if m.file == nil {
		m.file = os.NewFile(uintptr(m.fd), m.target)
	}
	return m.file
}

// ID is the kernel's mount ID (as in mountinfo), 0 if unknown (< 5.8).
func (m *Mount) ID() uint64 {
	if m.id == 0 {
		m.id = mountID(m.fd)
	}
	return m.id
}

// OpenDir opens the directory name below the mount's root, component by
// component, never following a symlink or "..", for attaching further
// mounts inside it.
func (m *Mount) OpenDir(name string) (*os.File, error) {
	shown := m.target + "/" + name
	dir, err := unix.FcntlInt(uintptr(m.fd), unix.F_DUPFD_CLOEXEC, 0)
	for _, c := range strings.Split(name, "/") {
		if err != nil || c == "" || c == "." {
			continue
		}
		if c == ".." {
			unix.Close(dir)
			return nil, &os.PathError{Op: "open", Path: shown, Err: unix.EXDEV}
		}
		next, openErr := unix.Openat(dir, c, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		unix.Close(dir)
		dir, err = next, openErr
	}
	if err != nil {
		return nil, &os.PathError{Op: "openat", Path: shown, Err: err}
	}
	return os.NewFile(uintptr(dir), shown), nil
}

// Detach unmounts the mount lazily (MNT_DETACH), through its own
// descriptor, so it can only ever unmount this mount. A mount that is
// already gone gives ErrNotMounted. Call it inside ns.Namespace.Run for
// the namespace the mount is in.
func (m *Mount) Detach() error {
	if !ns.OnConfinedThread() {
		return &Error{Op: "umount2", Source: m.source, Target: m.target, Err: ErrNotConfined}
	}
	err := viaProcFd(m.fd, func(p string) error { return unix.Unmount(p, unix.MNT_DETACH) })
	if err == unix.EINVAL {
		err = ErrNotMounted
	}
	if err != nil {
		return &Error{Op: "umount2", Source: m.source, Target: m.target, Flags: "detach", Err: err}
	}
	return nil
}

// undoFailed detaches a mount whose set-up failed (m may be nil) and
// returns err.
func (m *Mount) undoFailed(err error) error {
	if m != nil {
		m.Detach()
		m.Close()
	}
	return err
}

// AddUndo records on u how to take the mount back: Detach it on a fresh
// thread confined to n (so the step works whether or not it runs inside
// n.Run), or, with n nil, on the thread that runs the undo (one already
// confined to the mount's namespace); a mount already gone counts as done.
// Then Close it. Releasing the step only closes the descriptor (with the
// other steps' descriptors, see undo.Stack.AddStepFd).
func (m *Mount) AddUndo(u *undo.Stack, n *ns.Namespace) {
	u.AddStepFd(func() error {
		defer m.Close()
		detach := m.Detach
		if n != nil {
			detach = func() error { return n.Run(m.Detach) }
		}
		err := detach()
		if errors.Is(err, ErrNotMounted) {
			return nil
		}
		return err
	}, m.releaseFd)
}

// releaseFd is Close for an undo step released with others
// (undo.Stack.AddStepFd): it hands the bare descriptor back for the
// caller to close, or closes the *os.File Root made of it and returns -1.
// The Mount is not to be used again.
func (m *Mount) releaseFd() int {
	if m.file != nil {
		m.file.Close()
		return -1
	}
	fd := m.fd
	m.fd = -1
	return fd
}

// Close releases the descriptor; the mount stays.
func (m *Mount) Close() error {
	if m.file != nil {
		return m.file.Close()
	}
	return unix.Close(m.fd)
}

func (m *Mount) remount(flags uintptr) error {
	err := viaProcFd(m.fd, func(p string) error { return unix.Mount("", p, "", flags, "") })
	if err != nil {
		return &Error{Op: "remount", Source: m.source, Target: m.target, Flags: msString(flags), Err: err}
	}
	return nil
}

// viaProcFd calls fn with a path naming fd: its magic link in a private,
// verified procfs (pathrs-lite), reached as a name relative to the
// thread's working directory, so the container's /proc is never used.
// It needs a thread with its own filesystem context.
func viaProcFd(fd int, fn func(path string) error) error {
	return viaProcFds(fd, -1, func(p, _ string) error { return fn(p) })
}

// viaProcFds is viaProcFd for two descriptors (b is ignored when < 0).
func viaProcFds(a, b int, fn func(pa, pb string) error) error {
	proc, err := procfs.OpenProcRoot()
	if err != nil {
		return err
	}
	defer proc.Close()
	fdDir, unlock, err := proc.OpenThreadSelf("fd/")
	if err != nil {
		return err
	}
	defer unlock()
	defer fdDir.Close()
	return inDir(fdDir, func() error { return fn(strconv.Itoa(a), strconv.Itoa(b)) })
}

// inDir runs fn with dir as the thread's working directory.
func inDir(dir *os.File, fn func() error) error {
	old, err := unix.Open(".", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return os.NewSyscallError("open .", err)
	}
	defer unix.Close(old)
	if err := unix.Fchdir(int(dir.Fd())); err != nil {
		return os.NewSyscallError("fchdir", err)
	}
	defer unix.Fchdir(old)
	return fn()
}
