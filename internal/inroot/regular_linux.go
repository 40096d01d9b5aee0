package inroot

import (
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"sync"

	"github.com/cyphar/filepath-securejoin/pathrs-lite/procfs"
	"golang.org/x/sys/unix"
)

// Reading a file an image controls. Between looking at a directory entry
// and opening it, a process sharing the directory (a sidecar on a shared
// volume, the container through a volume) can rename a device node or a
// FIFO over it. Opening a device runs its driver's open, as the host's
// root and outside the container's device cgroup; opening a FIFO for
// reading blocks. So a file that is read is never opened by name for
// reading: it is opened O_PATH (which opens nothing), its type is checked
// with fstat on that descriptor, and only a regular file is then opened
// for reading through the descriptor itself (/proc/thread-self/fd/N, in
// a procfs instance of the package's own, or pathrs-lite's vetted one),
// which can only ever reach that inode.

// ErrNotRegular is the error for a file to read that is not a regular
// file: a device node, FIFO, socket, directory, or a symlink where none
// is followed. The file has not been opened.
var ErrNotRegular = errors.New("not a regular file")

// readFlags open a checked regular file for reading. O_NONBLOCK and
// O_NOCTTY cost nothing on a regular file and would matter on any other.
const readFlags = unix.O_RDONLY | unix.O_NOCTTY | unix.O_NONBLOCK | unix.O_CLOEXEC

// CheckRegular fstats the descriptor fd (O_PATH or not) and returns its
// status, or an error wrapping ErrNotRegular, naming name, when it is not
// a regular file.
func CheckRegular(fd int, name string) (unix.Stat_t, error) {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return st, &os.PathError{Op: "fstat", Path: name, Err: err}
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return st, fmt.Errorf("%s: %w (%s)", name, ErrNotRegular, TypeName(st.Mode))
	}
	return st, nil
}

// TypeName names the file type in mode (a stat's st_mode) for errors:
// "regular file", "directory", "symlink", "character device", …
func TypeName(mode uint32) string {
	switch mode & unix.S_IFMT {
	case unix.S_IFREG:
		return "regular file"
	case unix.S_IFDIR:
		return "directory"
	case unix.S_IFLNK:
		return "symlink"
	case unix.S_IFCHR:
		return "character device"
	case unix.S_IFBLK:
		return "block device"
	case unix.S_IFIFO:
		return "FIFO"
	case unix.S_IFSOCK:
		return "socket"
	}
	return fmt.Sprintf("file of type %#o", mode&unix.S_IFMT)
}

// ReopenRegular checks that h (an O_PATH handle) is a regular file and
// opens it for reading through its descriptor (a Reopener:
// /proc/thread-self/fd/N), never by its path. The error names h.Name().
func ReopenRegular(h *os.File) (*os.File, unix.Stat_t, error) {
	return reopenRegular(h, -1)
}

// reopenRegular is ReopenRegular refusing, before the reopen, a file of
// more than max bytes (max < 0: any size).
func reopenRegular(h *os.File, max int64) (*os.File, unix.Stat_t, error) {
	st, err := CheckRegular(int(h.Fd()), h.Name())
	if err != nil {
		return nil, st, err
	}
	if max >= 0 && st.Size > max {
		return nil, st, fmt.Errorf("%s: %d bytes, more than %d", h.Name(), st.Size, max)
	}
	r, err := NewReopener()
	if err != nil {
		return nil, st, fmt.Errorf("reopening %s: %w", h.Name(), err)
	}
	defer r.Close()
	// Without O_NONBLOCK: os.NewFile would try to register the regular
	// file with the poller.
	fd, err := r.reopen(int(h.Fd()), readFlags&^unix.O_NONBLOCK)
	if err != nil {
		return nil, st, fmt.Errorf("reopening %s: %w", h.Name(), err)
	}
	return os.NewFile(uintptr(fd), h.Name()), st, nil
}

// OpenRegular opens unsafePath, resolved inside dir (see Open; flags may
// add O_NOFOLLOW), for reading as ReopenRegular does: anything but a
// regular file is refused with ErrNotRegular before it is opened.
func OpenRegular(dir *os.File, unsafePath string, flags int) (*os.File, unix.Stat_t, error) {
	return openRegular(dir, unsafePath, flags, -1)
}

func openRegular(dir *os.File, unsafePath string, flags int, max int64) (*os.File, unix.Stat_t, error) {
	var fd int
	var err error
	if dir == nil {
		fd, err = unix.Open(unsafePath, unix.O_PATH|unix.O_CLOEXEC|flags, 0)
	} else {
		fd, err = Open(dir, unsafePath, unix.O_PATH|flags)
	}
	if err != nil {
		return nil, unix.Stat_t{}, &os.PathError{Op: "open", Path: unsafePath, Err: bareErrno(err)}
	}
	h := os.NewFile(uintptr(fd), unsafePath)
	defer h.Close()
	return reopenRegular(h, max)
}

// ReadRegular reads the regular file unsafePath inside dir (OpenRegular;
// dir nil: a host path, opened as it is), at most max bytes: a larger
// file is an error, found by its size before it is opened for reading,
// or once more is read (procfs files say 0).
func ReadRegular(dir *os.File, unsafePath string, flags int, max int64) ([]byte, error) {
	f, st, err := openRegular(dir, unsafePath, flags, max)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readBounded(f, unsafePath, st.Size, max)
}

// ReadRegularFile reads the regular file at a host path (symlinks
// followed), at most max bytes, with ReadRegular's checks.
func ReadRegularFile(path string, max int64) ([]byte, error) {
	return ReadRegular(nil, path, 0, max)
}

// readBounded reads f to its end, at most max bytes; size is the size
// fstat gave.
func readBounded(f *os.File, name string, size, max int64) ([]byte, error) {
	b, err := ReadToEnd(f, size, max)
	if errors.Is(err, ErrTooLarge) {
		return nil, fmt.Errorf("%s: more than %d bytes", name, max)
	}
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", name, err)
	}
	return b, nil
}

// ErrTooLarge is ReadToEnd's error for a file grown past its bound.
var ErrTooLarge = errors.New("file larger than allowed")

// ReadToEnd reads r, a file of size bytes by fstat, from its start to its
// end, at most max bytes (past them: ErrTooLarge). A file still of that
// size takes one read, of size+1 bytes, that returns size and io.EOF;
// one grown or shrunk since is read on to its end. r's ReadAt must
// report a short read with io.EOF, as os.File's does.
func ReadToEnd(r io.ReaderAt, size, max int64) ([]byte, error) {
	b := make([]byte, 0, size+1)
	for {
		if len(b) == cap(b) {
			b = slices.Grow(b, 4096)
		}
		n, err := r.ReadAt(b[len(b):cap(b)], int64(len(b)))
		b = b[:len(b)+n]
		if int64(len(b)) > max {
			return nil, ErrTooLarge
		}
		if err == io.EOF && (n == 0 || int64(len(b)) == size) {
			return b, nil // the end, or short where fstat said it ends
		}
		if err != nil && err != io.EOF {
			return nil, err
		}
	}
}

// bareErrno unwraps the *os.PathError filepath-securejoin's walk returns.
func bareErrno(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// OpenRegularAt is Reopener.OpenRegularAt with a Reopener of its own:
// name in the directory dirfd, not followed, opened for reading only if
// it is a regular file.
func OpenRegularAt(dirfd int, name string) (int, unix.Stat_t, error) {
	r, err := NewReopener()
	if err != nil {
		return -1, unix.Stat_t{}, err
	}
	defer r.Close()
	return r.OpenRegularAt(dirfd, name)
}

// Reopener opens many files for reading as ReopenRegular does, at the
// cost of one system call each: it reopens a descriptor N as
// thread-self/fd/N of a procfs it keeps open, resolved in that one call
// on the calling thread, so it needs no thread lock and any goroutine
// may use it. The procfs is an instance of the package's own, mounted
// nowhere (fsopen, subset=pid), so no one can mount over its magic
// links; where the kernel refuses one it is pathrs-lite's vetted procfs,
// and each reopen first checks (statx) that the link is on its mount.
// The ldcache scan, which reads every library of a root at each container
// start, uses one per Build.
type Reopener struct {
	proc  int
	own   *os.File // the descriptor proc, to close; nil for privateProc's
	mnt   uint64   // the procfs's mount ID where checked; 0: no check
	check bool
}

// privateProc is a procfs instance mounted nowhere, made once per
// process; -1 where the kernel (before 5.8, or a user namespace) refuses.
var privateProc = sync.OnceValue(func() int {
	fs, err := unix.Fsopen("proc", unix.FSOPEN_CLOEXEC)
	if err != nil {
		return -1
	}
	defer unix.Close(fs)
	if unix.FsconfigSetString(fs, "subset", "pid") != nil || unix.FsconfigCreate(fs) != nil {
		return -1
	}
	fd, err := unix.Fsmount(fs, unix.FSMOUNT_CLOEXEC, unix.MOUNT_ATTR_NODEV|unix.MOUNT_ATTR_NOEXEC|unix.MOUNT_ATTR_NOSUID)
	if err != nil {
		return -1
	}
	return fd
})

// NewReopener opens a procfs to reopen through.
func NewReopener() (*Reopener, error) {
	return newReopener(privateProc())
}

// newReopener reopens through the procfs private (pathrs-lite's where
// it is -1).
func newReopener(private int) (*Reopener, error) {
	if private >= 0 {
		return &Reopener{proc: private}, nil
	}
	h, err := procfs.OpenProcRoot()
	if err != nil {
		return nil, fmt.Errorf("opening procfs: %w", err)
	}
	defer h.Close()
	proc, err := h.OpenRoot(".")
	if err != nil {
		return nil, fmt.Errorf("opening procfs: %w", err)
	}
	r := &Reopener{proc: int(proc.Fd()), own: proc}
	if r.mnt, err = MountID(r.proc, ""); err != nil {
		r.Close()
		return nil, err
	}
	r.check = r.mnt != 0
	return r, nil
}

// Close closes the procfs the Reopener opened.
func (r *Reopener) Close() {
	if r.own != nil {
		r.own.Close()
	}
}

// OpenRegularAt opens name in the directory dirfd for reading without
// following a symlink there: O_PATH|O_NOFOLLOW, then CheckRegular, then
// Reopen. It returns the file's status with the readable descriptor;
// anything but a regular file is refused with ErrNotRegular, unopened.
func (r *Reopener) OpenRegularAt(dirfd int, name string) (int, unix.Stat_t, error) {
	pfd, err := unix.Openat(dirfd, name, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, unix.Stat_t{}, &os.PathError{Op: "open", Path: name, Err: err}
	}
	defer unix.Close(pfd)
	st, err := CheckRegular(pfd, name)
	if err != nil {
		return -1, st, err
	}
	fd, err := r.Reopen(pfd)
	return fd, st, err
}

// Reopen opens the file the descriptor pfd refers to for reading, through
// thread-self/fd/N of the procfs. The caller has checked it is a regular
// file. Where the procfs is pathrs-lite's, a mount over the magic link is
// refused, as pathrs-lite refuses it.
func (r *Reopener) Reopen(pfd int) (int, error) {
	return r.reopen(pfd, readFlags)
}

func (r *Reopener) reopen(pfd, flags int) (int, error) {
	link := "thread-self/fd/" + strconv.Itoa(pfd)
	if r.check {
		if m, err := MountID(r.proc, link); err != nil || m != r.mnt {
			return -1, fmt.Errorf("reopening fd %d: /proc/%s is not on procfs's own mount (%v)", pfd, link, err)
		}
	}
	fd, err := unix.Openat(r.proc, link, flags|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, &os.PathError{Op: "reopen", Path: "/proc/" + link, Err: err}
	}
	return fd, nil
}

// MountID is the mount ID of name in dir (dir itself for "", not
// following a final symlink), 0 where the kernel's statx cannot tell
// (before Linux 5.8).
func MountID(dir int, name string) (uint64, error) {
	var stx unix.Statx_t
	err := unix.Statx(dir, name, unix.AT_EMPTY_PATH|unix.AT_SYMLINK_NOFOLLOW, unix.STATX_MNT_ID, &stx)
	if err == unix.ENOSYS {
		return 0, nil
	}
	if err != nil {
		return 0, os.NewSyscallError("statx", err)
	}
	if stx.Mask&unix.STATX_MNT_ID == 0 {
		return 0, nil
	}
	return stx.Mnt_id, nil
}
