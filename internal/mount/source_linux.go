package mount

import (
	"fmt"
	"io/fs"
	"os"

	"golang.org/x/sys/unix"
)

// Source is something to mount into a container, opened on the host:
// a host file or directory (OpenSource) or a new tmpfs (NewTmpfs). A
// Source attaches once.
type Source struct {
	path   string      // host path or "tmpfs", for messages and Legacy
	file   *os.File    // O_PATH of the host file; nil for a tmpfs
	st     unix.Stat_t // of file
	keep   uintptr     // mount flags of the source mount (Legacy remount)
	tree   *os.File    // NewAPI: the detached mount; nil once attached
	attr   Attr
	method Method
	tmpfs  *tmpfsSpec // Legacy tmpfs, mounted at Attach
}

// OpenSource opens the host file or directory at path (its last component
// is not followed: a symlink is refused) and, with the new mount API,
// clones it into a detached mount with attr set. Call it in the host's
// mount namespace.
func OpenSource(path string, attr Attr, opts *Options) (*Source, error) {
	method, err := opts.method()
	if err != nil {
		return nil, &Error{Op: "open source", Source: path, Flags: attr.String(), Err: err}
	}
	s := &Source{path: path, attr: attr, method: method}
	if err := s.open(); err != nil {
		return nil, err
	}
	if method == NewAPI {
		err = s.cloneTree()
	}
	if err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

func (s *Source) open() error {
	fd, err := unix.Open(s.path, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return &Error{Op: "open", Source: s.path, Err: err}
	}
	s.file = os.NewFile(uintptr(fd), s.path)
	if err := unix.Fstat(fd, &s.st); err != nil {
		return &Error{Op: "fstat", Source: s.path, Err: err}
	}
	if s.st.Mode&unix.S_IFMT == unix.S_IFLNK {
		return &Error{Op: "open", Source: s.path, Err: fmt.Errorf("source is a symlink: %w", ErrTargetType)}
	}
	var sfs unix.Statfs_t
	if err := unix.Fstatfs(fd, &sfs); err != nil {
		return &Error{Op: "fstatfs", Source: s.path, Err: err}
	}
	s.keep = msFromStatfs(sfs.Flags)
	return nil
}

// cloneTree makes the detached copy and sets its attributes.
func (s *Source) cloneTree() error {
	fd, err := unix.OpenTree(int(s.file.Fd()), "", unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC|unix.AT_EMPTY_PATH)
	if err != nil {
		return &Error{Op: "open_tree", Source: s.path, Err: err}
	}
	s.tree = os.NewFile(uintptr(fd), s.path)
	return s.setAttr()
}

func (s *Source) setAttr() error {
	if s.attr == 0 {
		return nil
	}
	err := unix.MountSetattr(int(s.tree.Fd()), "", unix.AT_EMPTY_PATH, &unix.MountAttr{Attr_set: uint64(s.attr)})
	if err != nil {
		return &Error{Op: "mount_setattr", Source: s.path, Flags: s.attr.String(), Err: err}
	}
	return nil
}

// Path is the host path the source was opened from ("tmpfs" for one).
func (s *Source) Path() string { return s.path }

// Method is the method the source was prepared for (never Auto).
func (s *Source) Method() Method { return s.method }

// Attr is the attribute set the mount gets.
func (s *Source) Attr() Attr { return s.attr }

// Mode is the source's file type and permissions, to create a matching
// placeholder.
func (s *Source) Mode() fs.FileMode {
	if s.tmpfs != nil || s.file == nil {
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
	if s.tree != nil {
		s.tree.Close()
	}
	if s.file != nil {
		return s.file.Close()
	}
	return nil
}
