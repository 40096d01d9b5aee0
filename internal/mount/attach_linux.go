package mount

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"

	"github.com/go-nvc/nvc/internal/ns"
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
	shown := dir.Name() + "/" + name
	if !ns.OnConfinedThread() {
		return nil, &Error{Op: "attach", Source: s.path, Target: shown, Err: ErrNotConfined}
	}
	if s.method == NewAPI && s.tree == nil {
		return nil, &Error{Op: "attach", Source: s.path, Target: shown, Err: ErrAttached}
	}
	target, err := s.openTarget(dir, name, shown)
	if err != nil {
		return nil, err
	}
	defer target.Close()
	switch {
	case s.method == NewAPI:
		return s.moveTree(target, shown)
	case s.tmpfs != nil:
		return s.mountTmpfsLegacy(dir, name, target, shown)
	}
	return s.bindLegacy(dir, name, target, shown)
}

// openTarget opens name in dir without following it and checks it fits.
func (s *Source) openTarget(dir *os.File, name, shown string) (*os.File, error) {
	fd, err := unix.Openat(int(dir.Fd()), name, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &Error{Op: "open target", Source: s.path, Target: shown, Err: err}
	}
	f := os.NewFile(uintptr(fd), shown)
	if err := s.fits(f); err != nil {
		f.Close()
		return nil, &Error{Op: "open target", Source: s.path, Target: shown, Err: err}
	}
	return f, nil
}

func (s *Source) fits(target *os.File) error {
	var st unix.Stat_t
	if err := unix.Fstat(int(target.Fd()), &st); err != nil {
		return err
	}
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
func (s *Source) moveTree(target *os.File, shown string) (*Mount, error) {
	err := unix.MoveMount(int(s.tree.Fd()), "", int(target.Fd()), "",
		unix.MOVE_MOUNT_F_EMPTY_PATH|unix.MOVE_MOUNT_T_EMPTY_PATH)
	if err != nil {
		return nil, &Error{Op: "move_mount", Source: s.path, Target: shown, Flags: s.attr.String(), Err: err}
	}
	m := newMount(s.tree, s.path, shown)
	s.tree = nil
	return m, nil
}

// bindLegacy binds by path, checks what got mounted, then remounts.
func (s *Source) bindLegacy(dir *os.File, name string, target *os.File, shown string) (*Mount, error) {
	if err := s.sameHere(); err != nil {
		return nil, &Error{Op: "mount", Source: s.path, Target: shown, Err: err}
	}
	err := viaProcFd(target, func(t string) error { return unix.Mount(s.path, t, "", unix.MS_BIND, "") })
	if err != nil {
		return nil, &Error{Op: "mount", Source: s.path, Target: shown, Flags: "bind", Err: err}
	}
	m, err := reopenMounted(dir, name, target, s.path, shown)
	if err == nil && !sameInode(m.root, &s.st) {
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

func sameInode(f *os.File, want *unix.Stat_t) bool {
	var st unix.Stat_t
	return unix.Fstat(int(f.Fd()), &st) == nil && st.Dev == want.Dev && st.Ino == want.Ino
}
