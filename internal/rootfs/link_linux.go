package rootfs

import (
	"os"

	"golang.org/x/sys/unix"
)

// Link makes unsafePath a symlink to target as [Root.Symlink] does
// (replace false) or as [Root.ReplaceSymlink] does (replace true), with
// the same checks, errors and undo, but returns no Entry: a link it
// creates is not opened. Its type and identity (for undo) are read with
// one fstatat of its name and its target with one readlinkat, where
// Symlink opens the name, fstats and reads the link through that
// descriptor and closes it: the same name, read in the same window after
// the link was made, in two system calls instead of four. A new link that
// must be given the Root's owner is opened as before (the chown goes
// through a descriptor).
func (r *Root) Link(target, unsafePath string, replace bool) error {
	var e *Entry
	var err error
	if replace {
		e, err = r.replaceSymlink(target, unsafePath, true)
	} else {
		e, err = r.symlink(target, unsafePath, true)
	}
	if err != nil {
		return err
	}
	return e.Close()
}

// statEntry is a lean Entry for name in dir: no descriptor of its own
// (fd -1), its stat read by name without following it. It takes over the
// reference to dir on success.
func statEntry(dir *handle, name, unsafePath string, created bool) (*Entry, error) {
	e := &Entry{dir: dir, name: name, fd: -1, path: unsafePath, created: created}
	if err := unix.Fstatat(dir.fd, name, &e.st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return nil, &os.PathError{Op: "fstatat", Path: unsafePath, Err: err}
	}
	return e, nil
}

// reopen gives a lean entry a descriptor of its own, opened by name, and
// its stat read through it.
func (e *Entry) reopen() error {
	fd, err := openLeaf(e.dir.fd, e.name, e.path)
	if err != nil {
		return err
	}
	id, err := fstatMount(fd, &e.st)
	if err != nil {
		unix.Close(fd)
		return &os.PathError{Op: "fstat", Path: e.path, Err: err}
	}
	e.fd, e.mntID = fd, id
	return nil
}

// readlink reads the entry's link target (through its descriptor, or by
// name for a lean entry); see readlinkFd for want.
func (e *Entry) readlink(want int) (string, error) {
	if e.fd >= 0 {
		return readlinkFd(e.fd, want)
	}
	return readlinkAt(e.dir.fd, e.name, want)
}
