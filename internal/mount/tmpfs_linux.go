package mount

import (
	"fmt"
	"io/fs"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// TmpfsOptions configure NewTmpfs; nil means all defaults.
type TmpfsOptions struct {
	// Mode is the root directory's mode; zero is 0555.
	Mode fs.FileMode
	// Size limits the tmpfs, in bytes; zero leaves the kernel default.
	Size int64
	// Attr is applied once the tmpfs is populated (ReadOnly included);
	// zero is none.
	Attr Attr
	// Method chooses the mount method; zero is Auto.
	Method Method
}

// tmpfsSpec is a tmpfs for Legacy, mounted at Attach.
type tmpfsSpec struct {
	mode     fs.FileMode
	size     int64
	populate func(root *os.File) error
}

func (t *tmpfsSpec) config() [][2]string {
	c := [][2]string{{"source", "tmpfs"}, {"mode", fmt.Sprintf("%04o", uint32(t.mode.Perm()))}}
	if t.size > 0 {
		c = append(c, [2]string{"size", strconv.FormatInt(t.size, 10)})
	}
	return c
}

func (t *tmpfsSpec) data() string {
	s := ""
	for _, kv := range t.config()[1:] {
		s += "," + kv[0] + "=" + kv[1]
	}
	return s[1:]
}

// NewTmpfs makes a tmpfs to attach and fills it with populate, which
// gets the tmpfs's root directory and creates entries relative to it
// (WriteFileAt, MkdirAt). With NewAPI this all happens on a detached
// mount, before anyone can see it, and Attr (read-only included) is set
// before Attach. With Legacy the tmpfs is mounted, populated and remounted
// at Attach, in the container's namespace. Call it in the host namespace.
func NewTmpfs(opts *TmpfsOptions, populate func(root *os.File) error) (*Source, error) {
	var o TmpfsOptions
	if opts != nil {
		o = *opts
	}
	if o.Mode == 0 {
		o.Mode = 0o555
	}
	method, err := (&Options{Method: o.Method}).method()
	if err != nil {
		return nil, &Error{Op: "fsopen", Source: "tmpfs", Err: err}
	}
	s := newSource("tmpfs", o.Attr, method)
	s.tmpfs = &tmpfsSpec{mode: o.Mode, size: o.Size, populate: populate}
	if method == Legacy {
		return s, nil
	}
	if err := s.makeTmpfs(); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// makeTmpfs creates the detached tmpfs, populates it, then sets Attr.
func (s *Source) makeTmpfs() error {
	fsfd, err := unix.Fsopen("tmpfs", unix.FSOPEN_CLOEXEC)
	if err != nil {
		return &Error{Op: "fsopen", Source: s.path, Err: err}
	}
	defer unix.Close(fsfd)
	for _, kv := range s.tmpfs.config() {
		if err := unix.FsconfigSetString(fsfd, kv[0], kv[1]); err != nil {
			return &Error{Op: "fsconfig", Source: s.path, Flags: kv[0] + "=" + kv[1], Err: err}
		}
	}
	if err := unix.FsconfigCreate(fsfd); err != nil {
		return &Error{Op: "fsconfig create", Source: s.path, Err: err}
	}
	early := s.attr &^ ReadOnly
	mfd, err := unix.Fsmount(fsfd, unix.FSMOUNT_CLOEXEC, int(early))
	if err != nil {
		return &Error{Op: "fsmount", Source: s.path, Flags: early.String(), Err: err}
	}
	s.tree = mfd
	if err := s.populateDetached(); err != nil {
		return &Error{Op: "populate", Source: s.path, Err: err}
	}
	return s.setAttr()
}

// populateDetached calls populate with the detached tmpfs's root, through
// a duplicate descriptor (populate's *os.File must not own s.tree).
func (s *Source) populateDetached() error {
	fd, err := unix.FcntlInt(uintptr(s.tree), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return os.NewSyscallError("fcntl", err)
	}
	root := os.NewFile(uintptr(fd), s.path)
	defer root.Close()
	return s.tmpfs.populate(root)
}

// mountTmpfsLegacy mounts the tmpfs on target, populates it and
// remounts it with Attr.
func (s *Source) mountTmpfsLegacy(dir int, name string, target int, shown string) (*Mount, error) {
	flags := s.attr.msFlags() &^ unix.MS_RDONLY
	data := s.tmpfs.data()
	err := viaProcFd(target, func(t string) error { return unix.Mount("tmpfs", t, "tmpfs", flags, data) })
	if err != nil {
		return nil, &Error{Op: "mount", Source: s.path, Target: shown, Flags: msString(flags) + "," + data, Err: err}
	}
	m, err := reopenMounted(dir, name, target, s.path, shown)
	if err == nil {
		err = isTmpfs(m)
	}
	if err == nil {
		err = s.populateLegacy(m)
	}
	if err == nil && s.attr&ReadOnly != 0 {
		err = m.remount(unix.MS_BIND | unix.MS_REMOUNT | s.attr.msFlags())
	}
	if err != nil {
		return nil, m.undoFailed(err)
	}
	return m, nil
}

func (s *Source) populateLegacy(m *Mount) error {
	if err := s.tmpfs.populate(m.Root()); err != nil {
		return &Error{Op: "populate", Source: s.path, Target: m.target, Err: err}
	}
	return nil
}

func isTmpfs(m *Mount) error {
	var sfs unix.Statfs_t
	if err := unix.Fstatfs(m.fd, &sfs); err != nil {
		return &Error{Op: "fstatfs", Source: m.source, Target: m.target, Err: err}
	}
	if sfs.Type != unix.TMPFS_MAGIC {
		return &Error{Op: "mount", Source: m.source, Target: m.target, Err: fmt.Errorf("mounted filesystem has type %#x, not tmpfs: %w", sfs.Type, ErrSourceMismatch)}
	}
	return nil
}

// WriteFileAt creates name below dir (a tmpfs being populated) holding
// data, with exactly perm. It fails if name exists.
func WriteFileAt(dir *os.File, name string, data []byte, perm fs.FileMode) error {
	fd, err := unix.Openat(int(dir.Fd()), name, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return &os.PathError{Op: "openat", Path: name, Err: err}
	}
	defer unix.Close(fd)
	for len(data) > 0 {
		n, err := unix.Write(fd, data)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return &os.PathError{Op: "write", Path: name, Err: err}
		}
		data = data[n:]
	}
	return fchmod(fd, name, perm)
}

// MkdirAt creates the directory name below dir (a tmpfs being
// populated) with exactly perm: set by name, never through a symlink
// (fchmodat2 with AT_SYMLINK_NOFOLLOW, Linux 6.6), else through a
// descriptor of it.
func MkdirAt(dir *os.File, name string, perm fs.FileMode) error {
	if err := unix.Mkdirat(int(dir.Fd()), name, 0o700); err != nil {
		return &os.PathError{Op: "mkdirat", Path: name, Err: err}
	}
	return chmodAt(dir, name, perm)
}

// chmodAt sets exactly perm on name in dir without following it: by
// name where the kernel can refuse a symlink (fchmodat2), else through a
// descriptor opened O_NOFOLLOW|O_DIRECTORY (a symlink fails to open).
func chmodAt(dir *os.File, name string, perm fs.FileMode) error {
	err := unix.Fchmodat(int(dir.Fd()), name, unixMode(perm), unix.AT_SYMLINK_NOFOLLOW)
	switch err {
	case nil:
		return nil
	case unix.EOPNOTSUPP, unix.ENOSYS, unix.EINVAL: // no fchmodat2, or a symlink
	default:
		return &os.PathError{Op: "chmod", Path: name, Err: err}
	}
	fd, err := unix.Openat(int(dir.Fd()), name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return &os.PathError{Op: "openat", Path: name, Err: err}
	}
	defer unix.Close(fd)
	return fchmod(fd, name, perm)
}

// fchmod sets exactly perm (set-id and sticky bits included) on fd.
func fchmod(fd int, name string, perm fs.FileMode) error {
	if err := unix.Fchmod(fd, unixMode(perm)); err != nil {
		return &os.PathError{Op: "chmod", Path: name, Err: err}
	}
	return nil
}

// unixMode is perm as chmod(2)'s mode, set-id and sticky bits included.
func unixMode(perm fs.FileMode) uint32 {
	mode := uint32(perm.Perm())
	for _, b := range [...]struct {
		m fs.FileMode
		u uint32
	}{{fs.ModeSetuid, unix.S_ISUID}, {fs.ModeSetgid, unix.S_ISGID}, {fs.ModeSticky, unix.S_ISVTX}} {
		if perm&b.m != 0 {
			mode |= b.u
		}
	}
	return mode
}
