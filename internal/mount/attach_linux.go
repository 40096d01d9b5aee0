package mount

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"

	"github.com/go-nvc/nvc/internal/ns"
	"github.com/go-nvc/nvc/internal/rootfs"
)

// Attach mounts the source on name in dir, a directory opened inside the
// container's rootfs (rootfs.Entry's Dir and Name). The target must exist
// and fit the source: a directory for a directory, a regular file (or a
// node of the source's own type) otherwise; it is never followed.
//
// Call it inside ns.Namespace.Run for the container's namespace. With
// NewAPI it moves the prepared detached mount; with Legacy it binds the
// source's host path (checked to be the host file) and remounts it with
// the attributes. A tmpfs made by NewTmpfs is mounted and, with Legacy,
// populated here.
func (s *Source) Attach(dir *os.File, name string) (*Mount, error) {
	if err := s.onConfined(dir.Name() + "/" + name); err != nil {
		return nil, err
	}
	return s.attachAt(dir, name)
}

func (s *Source) attachAt(dir *os.File, name string) (*Mount, error) {
	shown := dir.Name() + "/" + name
	if err := s.canAttach(shown); err != nil {
		return nil, err
	}
	target, err := s.openTarget(int(dir.Fd()), name, shown)
	if err != nil {
		return nil, err
	}
	defer unix.Close(target)
	return s.attach(int(dir.Fd()), name, target, shown)
}

// AttachEntry is Attach onto e, an entry made or found in the rootfs,
// through e's own descriptor: the target is not opened again by name, and
// e's fstat (a file's type never changes) is what must fit the source.
func (s *Source) AttachEntry(e *rootfs.Entry) (*Mount, error) {
	if err := s.onConfined(e.Path()); err != nil {
		return nil, err
	}
	return s.attachEntry(e)
}

func (s *Source) attachEntry(e *rootfs.Entry) (*Mount, error) {
	shown := e.Path()
	if err := s.canAttach(shown); err != nil {
		return nil, err
	}
	st := e.Stat()
	if err := s.fits(&st); err != nil {
		return nil, &Error{Op: "open target", Source: s.path, Target: shown, Err: err}
	}
	return s.attach(e.DirFd(), e.Name(), e.Fd(), shown)
}

// onConfined refuses to attach outside a confined thread.
func (s *Source) onConfined(shown string) error {
	if !ns.OnConfinedThread() {
		return &Error{Op: "attach", Source: s.path, Target: shown, Err: ErrNotConfined}
	}
	return nil
}

// canAttach refuses to attach twice.
func (s *Source) canAttach(shown string) error {
	if s.method == NewAPI && s.tree < 0 {
		return &Error{Op: "attach", Source: s.path, Target: shown, Err: ErrAttached}
	}
	return nil
}

func (s *Source) attach(dir int, name string, target int, shown string) (*Mount, error) {
	switch {
	case s.method == NewAPI:
		return s.moveTree(target, shown)
	case s.tmpfs != nil:
		return s.mountTmpfsLegacy(dir, name, target, shown)
	}
	return s.bindLegacy(dir, name, target, shown)
}

// openTarget opens name in dir without following it and checks it fits.
func (s *Source) openTarget(dir int, name, shown string) (int, error) {
	fd, err := unix.Openat(dir, name, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, &Error{Op: "open target", Source: s.path, Target: shown, Err: err}
	}
	var st unix.Stat_t
	err = unix.Fstat(fd, &st)
	if err == nil {
		err = s.fits(&st)
	}
	if err != nil {
		unix.Close(fd)
		return -1, &Error{Op: "open target", Source: s.path, Target: shown, Err: err}
	}
	return fd, nil
}

// fits checks that a target whose fstat is st can take the source.
func (s *Source) fits(st *unix.Stat_t) error {
	typ := st.Mode & unix.S_IFMT
	switch {
	case typ == unix.S_IFLNK:
		return fmt.Errorf("target is a symlink: %w", ErrTargetType)
	case s.IsDir() != (typ == unix.S_IFDIR):
		return fmt.Errorf("target is %v, source is %v: %w", typeMode(st.Mode), s.Mode().Type(), ErrTargetType)
	case typ != unix.S_IFDIR && typ != unix.S_IFREG && typ != s.st.Mode&unix.S_IFMT:
		return fmt.Errorf("target is %v, source is %v: %w", typeMode(st.Mode), s.Mode().Type(), ErrTargetType)
	}
	return nil
}

// moveTree attaches the detached mount onto target.
func (s *Source) moveTree(target int, shown string) (*Mount, error) {
	err := unix.MoveMount(s.tree, "", target, "", unix.MOVE_MOUNT_F_EMPTY_PATH|unix.MOVE_MOUNT_T_EMPTY_PATH)
	if err != nil {
		return nil, &Error{Op: "move_mount", Source: s.path, Target: shown, Flags: s.attr.String(), Err: err}
	}
	m := newMount(s.tree, s.path, shown)
	s.tree = -1
	return m, nil
}

// bindLegacy binds by path (or, for OpenSourceFd's source, through the
// source descriptor's magic link), checks what got mounted, then
// remounts.
func (s *Source) bindLegacy(dir int, name string, target int, shown string) (*Mount, error) {
	var err error
	if s.byFd {
		err = viaProcFds(s.fd, target, func(src, t string) error { return unix.Mount(src, t, "", unix.MS_BIND, "") })
	} else if err = s.sameHere(); err != nil {
		return nil, &Error{Op: "mount", Source: s.path, Target: shown, Err: err}
	} else {
		err = viaProcFd(target, func(t string) error { return unix.Mount(s.path, t, "", unix.MS_BIND, "") })
	}
	if err != nil {
		return nil, &Error{Op: "mount", Source: s.path, Target: shown, Flags: "bind", Err: err}
	}
	m, err := reopenMounted(dir, name, target, s.path, shown)
	if err == nil && !sameInode(m.fd, &s.st) {
		err = &Error{Op: "mount", Source: s.path, Target: shown, Err: ErrSourceMismatch}
	}
	if err == nil {
		err = m.remount(unix.MS_BIND | unix.MS_REMOUNT | s.keep | s.attr.msFlags())
	}
	if err != nil {
		return nil, m.undoFailed(err)
	}
	return m, nil
}

// sameHere checks that the source path, seen from this namespace, is
// the host file that was opened.
func (s *Source) sameHere() error {
	var st unix.Stat_t
	if err := unix.Fstatat(unix.AT_FDCWD, s.path, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return fmt.Errorf("%w: %w", ErrSourceMismatch, err)
	}
	if st.Dev != s.st.Dev || st.Ino != s.st.Ino {
		return ErrSourceMismatch
	}
	return nil
}

func sameInode(fd int, want *unix.Stat_t) bool {
	var st unix.Stat_t
	return unix.Fstat(fd, &st) == nil && st.Dev == want.Dev && st.Ino == want.Ino
}
