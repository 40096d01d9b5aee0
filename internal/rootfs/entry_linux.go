package rootfs

import (
	"io/fs"
	"os"

	"golang.org/x/sys/unix"
)

// Entry is a file, directory, symlink or node inside a root, pinned by
// descriptors: its parent directory and itself (O_PATH, not followed).
type Entry struct {
	dir     *os.File
	name    string
	file    *os.File
	path    string
	st      unix.Stat_t
	created bool
}

// newEntry opens name in dir; the Entry takes ownership of dir.
func newEntry(dir *os.File, name, unsafePath string, created bool) (*Entry, error) {
	f, err := openLeaf(dir, name, unsafePath)
	if err != nil {
		return nil, err
	}
	return entryFor(dir, name, f, unsafePath, created)
}

// entryFor wraps an already open file; it takes ownership of dir and f.
func entryFor(dir *os.File, name string, f *os.File, unsafePath string, created bool) (*Entry, error) {
	e := &Entry{dir: dir, name: name, file: f, path: unsafePath, created: created}
	if err := unix.Fstat(int(f.Fd()), &e.st); err != nil {
		f.Close()
		return nil, &os.PathError{Op: "fstat", Path: unsafePath, Err: err}
	}
	return e, nil
}

// Dir is the O_PATH descriptor of the entry's parent directory.
func (e *Entry) Dir() *os.File { return e.dir }

// Name is the entry's name in Dir.
func (e *Entry) Name() string { return e.name }

// File is the entry's own descriptor (O_PATH, or read-only for a file
// just created): a move_mount target.
func (e *Entry) File() *os.File { return e.file }

// Path is the unsafePath the entry was asked for, for messages.
func (e *Entry) Path() string { return e.path }

// Created reports whether this call created the entry (it did not exist).
func (e *Entry) Created() bool { return e.created }

// Mode is the entry's type and permissions when it was opened.
func (e *Entry) Mode() fs.FileMode { return fileMode(e.st.Mode) }

// Rdev is the device number of a device node entry.
func (e *Entry) Rdev() uint64 { return e.st.Rdev }

// Close releases both descriptors.
func (e *Entry) Close() error {
	e.dir.Close()
	return e.file.Close()
}

func fileMode(m uint32) fs.FileMode {
	mode := fs.FileMode(m & 0o777)
	if m&unix.S_ISUID != 0 {
		mode |= fs.ModeSetuid
	}
	if m&unix.S_ISGID != 0 {
		mode |= fs.ModeSetgid
	}
	if m&unix.S_ISVTX != 0 {
		mode |= fs.ModeSticky
	}
	switch m & unix.S_IFMT {
	case unix.S_IFDIR:
		mode |= fs.ModeDir
	case unix.S_IFLNK:
		mode |= fs.ModeSymlink
	case unix.S_IFCHR:
		mode |= fs.ModeDevice | fs.ModeCharDevice
	case unix.S_IFBLK:
		mode |= fs.ModeDevice
	case unix.S_IFIFO:
		mode |= fs.ModeNamedPipe
	case unix.S_IFSOCK:
		mode |= fs.ModeSocket
	}
	return mode
}
