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
	s := &Source{path: "tmpfs", attr: o.Attr, method: method}
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
	s.tree = os.NewFile(uintptr(mfd), s.path)
	if err := s.tmpfs.populate(s.tree); err != nil {
		return &Error{Op: "populate", Source: s.path, Err: err}
	}
	return s.setAttr()
}

// mountTmpfsLegacy mounts the tmpfs on target, populates it and
// remounts it with Attr.
func (s *Source) mountTmpfsLegacy(dir *os.File, name string, target *os.File, shown string) (*Mount, error) {
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
	if err := s.tmpfs.populate(m.root); err != nil {
		return &Error{Op: "populate", Source: s.path, Target: m.target, Err: err}
	}
	return nil
}

func isTmpfs(m *Mount) error {
	var sfs unix.Statfs_t
	if err := unix.Fstatfs(int(m.root.Fd()), &sfs); err != nil {
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
	f := os.NewFile(uintptr(fd), name)
	defer f.Close()
	if _, err := f.Write(data); err != nil {
		return err
	}
	return f.Chmod(perm)
}

// MkdirAt creates the directory name below dir (a tmpfs being
// populated) with exactly perm.
func MkdirAt(dir *os.File, name string, perm fs.FileMode) error {
	if err := unix.Mkdirat(int(dir.Fd()), name, 0o700); err != nil {
		return &os.PathError{Op: "mkdirat", Path: name, Err: err}
	}
	fd, err := unix.Openat(int(dir.Fd()), name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return &os.PathError{Op: "openat", Path: name, Err: err}
	}
	f := os.NewFile(uintptr(fd), name)
	defer f.Close()
	return f.Chmod(perm)
}
