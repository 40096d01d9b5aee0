package mount

import (
	"errors"
	"fmt"
	"io/fs"

	"golang.org/x/sys/unix"
)

// Source is something to mount into a container, opened on the host:
// a host file or directory (OpenSource) or a new tmpfs (NewTmpfs). A
// Source attaches once. Descriptors are kept as numbers: wrapping each in
// an *os.File would cost an fcntl(F_GETFL) and a finalizer per mount.
type Source struct {
	path   string      // host path or "tmpfs", for messages and Legacy
	fd     int         // Legacy: O_PATH of the host file, pinning its inode; -1 else
	st     unix.Stat_t // of the host file
	keep   uintptr     // mount flags of the source mount (Legacy remount)
	tree   int         // NewAPI: the detached mount; -1 once attached
	attr   Attr
	method Method
	tmpfs  *tmpfsSpec // Legacy tmpfs, mounted at Attach
	byFd   bool       // opened by OpenSourceFd: Legacy binds fd, not path
}

// OpenSource opens the host file or directory at path (its last component
// is not followed: a symlink is refused) and, with the new mount API,
// clones it into a detached mount with attr set. Call it in the host's
// mount namespace.
//
// With the new mount API the clone is made from the path directly
// (open_tree with AT_SYMLINK_NOFOLLOW) and the type checks use the
// detached mount's own fstat: three system calls per source.
func OpenSource(path string, attr Attr, opts *Options) (*Source, error) {
	method, err := opts.method()
	if err != nil {
		return nil, &Error{Op: "open source", Source: path, Flags: attr.String(), Err: err}
	}
	s := newSource(path, attr, method)
	if method == NewAPI {
		err = s.cloneTree()
	} else {
		err = s.open()
	}
	if err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// OpenSourceFd is OpenSource for a file already open (O_PATH is enough),
// such as one resolved inside a container's rootfs: the source is what fd
// refers to, never a path looked up again. name is for messages. With the
// new mount API it is cloned into a detached mount (open_tree with
// AT_EMPTY_PATH) whose attr is set; with Legacy a duplicate of fd is kept
// and Attach binds through its magic link. The caller keeps fd.
//
// Call it in the mount namespace the file's mount belongs to: open_tree
// refuses to clone a mount of another namespace. For a file inside a
// container's rootfs that is on the thread confined to the container's
// namespace (ns.Namespace.Run), where Attach runs too.
func OpenSourceFd(fd int, name string, attr Attr, opts *Options) (*Source, error) {
	method, err := opts.method()
	if err != nil {
		return nil, &Error{Op: "open source", Source: name, Flags: attr.String(), Err: err}
	}
	s := newSource(name, attr, method)
	s.byFd = true
	if method == NewAPI {
		err = s.cloneFd(fd)
	} else {
		err = s.dupFd(fd)
	}
	if err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// cloneFd is cloneTree for an open file.
func (s *Source) cloneFd(fd int) error {
	return s.clone(fd, "", unix.AT_EMPTY_PATH)
}

// dupFd is open (Legacy's) for an open file.
func (s *Source) dupFd(fd int) error {
	dup, err := unix.FcntlInt(uintptr(fd), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return &Error{Op: "fcntl F_DUPFD_CLOEXEC", Source: s.path, Err: err}
	}
	s.fd = dup
	return s.statKeep(dup)
}

// newSource is a Source with no descriptor yet.
func newSource(path string, attr Attr, method Method) *Source {
	return &Source{path: path, attr: attr, method: method, fd: -1, tree: -1}
}

// open is Legacy's: open the host file (held, so that its inode number,
// which Attach checks, cannot be reused), stat it and note its mount's
// flags, which the remount must keep.
func (s *Source) open() error {
	fd, err := unix.Open(s.path, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return &Error{Op: "open", Source: s.path, Err: err}
	}
	s.fd = fd
	return s.statKeep(fd)
}

// statKeep stats fd and notes its mount's flags, which Legacy's remount
// must keep.
func (s *Source) statKeep(fd int) error {
	if err := s.stat(fd); err != nil {
		return err
	}
	var sfs unix.Statfs_t
	if err := unix.Fstatfs(fd, &sfs); err != nil {
		return &Error{Op: "fstatfs", Source: s.path, Err: err}
	}
	s.keep = msFromStatfs(sfs.Flags)
	return nil
}

// stat fills s.st from fd (opened without following) and refuses a
// symlink.
func (s *Source) stat(fd int) error {
	if err := unix.Fstat(fd, &s.st); err != nil {
		return &Error{Op: "fstat", Source: s.path, Err: err}
	}
	if s.st.Mode&unix.S_IFMT == unix.S_IFLNK {
		return &Error{Op: "open", Source: s.path, Err: fmt.Errorf("source is a symlink: %w", ErrTargetType)}
	}
	return nil
}

// cloneTree makes the detached copy of the host file, checks it and sets
// its attributes.
func (s *Source) cloneTree() error {
	return s.clone(unix.AT_FDCWD, s.path, unix.AT_SYMLINK_NOFOLLOW)
}

// clone makes the detached copy of name in dir with the source's
// attributes (open_tree_attr, see openTreeAttr), else clones it and sets
// them, and checks what it got.
func (s *Source) clone(dir int, name string, flags int) error {
	flags |= unix.OPEN_TREE_CLONE | unix.OPEN_TREE_CLOEXEC
	fd, err := openTreeAttr(dir, name, flags, s.attr)
	if err == nil {
		s.tree = fd
		return s.stat(fd)
	}
	if err != errNoTreeAttr {
		return &Error{Op: "open_tree_attr", Source: s.path, Flags: s.attr.String(), Err: err}
	}
	fd, err = unix.OpenTree(dir, name, uint(flags))
	if err != nil {
		return &Error{Op: "open_tree", Source: s.path, Err: err}
	}
	s.tree = fd
	if err := s.stat(fd); err != nil {
		return err
	}
	return s.setAttr()
}

func (s *Source) setAttr() error {
	if s.attr == 0 {
		return nil
	}
	err := unix.MountSetattr(s.tree, "", unix.AT_EMPTY_PATH, &unix.MountAttr{Attr_set: uint64(s.attr)})
	if err != nil {
		return &Error{Op: "mount_setattr", Source: s.path, Flags: s.attr.String(), Err: err}
	}
	return nil
}

// Path is the host path the source was opened from ("tmpfs" for one).
func (s *Source) Path() string { return s.path }

// Method is the method the source was prepared for (never Auto).
func (s *Source) Method() Method { return s.method }

// Mode is the source's file type and permissions, to create a matching
// placeholder.
func (s *Source) Mode() fs.FileMode {
	if s.tmpfs != nil {
		return fs.ModeDir | 0o555
	}
	return fs.FileMode(s.st.Mode&0o777) | typeMode(s.st.Mode)
}

func typeMode(m uint32) fs.FileMode {
	switch m & unix.S_IFMT {
	case unix.S_IFDIR:
		return fs.ModeDir
	case unix.S_IFCHR:
		return fs.ModeDevice | fs.ModeCharDevice
	case unix.S_IFBLK:
		return fs.ModeDevice
	case unix.S_IFSOCK:
		return fs.ModeSocket
	case unix.S_IFIFO:
		return fs.ModeNamedPipe
	}
	return 0
}

// Rdev is the device number of a device node source (st_rdev), zero for
// anything else, to check a node before it is mounted.
func (s *Source) Rdev() uint64 {
	if s.st.Mode&unix.S_IFMT != unix.S_IFCHR && s.st.Mode&unix.S_IFMT != unix.S_IFBLK {
		return 0
	}
	return s.st.Rdev
}

// IsDir reports whether the source is a directory (a tmpfs is).
func (s *Source) IsDir() bool { return s.Mode().IsDir() }

// Close releases the source. A detached mount that was never attached
// disappears with it.
func (s *Source) Close() error {
	return errors.Join(closeFd(&s.tree), closeFd(&s.fd))
}

// closeFd closes *fd unless it is negative, and marks it closed.
func closeFd(fd *int) error {
	if *fd < 0 {
		return nil
	}
	err := unix.Close(*fd)
	*fd = -1
	return err
}
