package rootfs

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// creation is what undo needs to remove one created entry, and to tell
// whether it is still what was created.
type creation struct {
	dir    *handle // a reference to the parent
	name   string
	shown  string // the path inside the root, for messages
	typ    uint32 // the type created (S_IFMT bits)
	known  bool   // st holds the entry's identity (fstat succeeded)
	st     unix.Stat_t
	target string // a symlink's content
	sized  bool   // regular file whose content is ours (WriteFile)
}

// recordNew registers name in dir, of type typ, on the undo stack right
// after the system call that created it succeeded and before any other
// (an open, fstat or chown that fails next, as under EMFILE, must not
// leave it behind). Its identity is added by identify once known. It
// returns nil without an undo stack.
func (r *Root) recordNew(dir *handle, name, shown string, typ uint32, target string) *creation {
	if r.opts.Undo == nil {
		return nil
	}
	c := &creation{dir: dir.acquire(), name: name, shown: shown, typ: typ, target: target}
	r.opts.Undo.AddStepFd(c.undo, c.dir.releaseFd)
	return c
}

// identify notes the created entry's fstat. Of st only what a chown or
// chmod cannot change is used: device, inode, type and device number.
func (c *creation) identify(st *unix.Stat_t) {
	if c != nil {
		c.st, c.known = *st, true
	}
}

// newCreation notes name in dir, whose fstat is st; it takes a reference
// to dir.
func newCreation(dir *handle, name string, st *unix.Stat_t, target string) *creation {
	return &creation{dir: dir.acquire(), name: name, shown: dir.name + "/" + name,
		typ: st.Mode & unix.S_IFMT, known: true, st: *st, target: target}
}

// ErrLeftBehind is matched by an undo error naming an entry that undo
// could not take back: a directory no longer empty (someone created
// something inside), an entry replaced or written to since, or one whose
// removal failed.
var ErrLeftBehind = errors.New("left behind")

// errChanged is the cause of an entry left because it is no longer what
// was created.
var errChanged = errors.New("changed since it was created")

// undo removes the entry if it is still what was created. Anything else
// found there (replaced, written to, no longer empty) is left alone and
// reported (ErrLeftBehind); an entry already gone counts as taken back.
func (c *creation) undo() error {
	defer c.dir.release()
	var st unix.Stat_t
	err := unix.Fstatat(c.dir.fd, c.name, &st, unix.AT_SYMLINK_NOFOLLOW)
	if err == unix.ENOENT {
		return nil
	}
	if err != nil {
		return c.left(&os.PathError{Op: "fstatat", Path: c.shown, Err: err})
	}
	if !c.stillOurs(&st) {
		return c.left(errChanged)
	}
	flags := 0
	if c.typ == unix.S_IFDIR {
		flags = unix.AT_REMOVEDIR
	}
	err = unix.Unlinkat(c.dir.fd, c.name, flags)
	if err == nil || err == unix.ENOENT {
		return nil
	}
	return c.left(&os.PathError{Op: "unlinkat", Path: c.shown, Err: err})
}

func (c *creation) left(cause error) error {
	return fmt.Errorf("%w: %q: %w", ErrLeftBehind, c.shown, cause)
}

// stillOurs reports whether st, found at the entry's name, is what was
// created: the same inode (when known) and type, an empty regular file
// unless sized, the same symlink target, the same device number.
func (c *creation) stillOurs(st *unix.Stat_t) bool {
	if st.Mode&unix.S_IFMT != c.typ {
		return false
	}
	if c.known && (st.Dev != c.st.Dev || st.Ino != c.st.Ino) {
		return false
	}
	switch c.typ {
	case unix.S_IFREG:
		return c.sized || st.Size == 0
	case unix.S_IFLNK:
		return c.linksToTarget()
	case unix.S_IFCHR:
		return !c.known || st.Rdev == c.st.Rdev
	}
	return true
}

func (c *creation) linksToTarget() bool {
	buf := make([]byte, len(c.target)+1)
	n, err := unix.Readlinkat(c.dir.fd, c.name, buf)
	return err == nil && n <= len(c.target) && string(buf[:n]) == c.target
}

// openCreated opens the entry mk made or found: it wraps fd when mk
// opened it (>= 0), else opens name in dir; then fstats it. Lean, without
// fd, it only stats name in dir (statEntry).
func (r *Root) openCreated(dir *handle, name string, fd int, unsafePath string, created, lean bool) (*Entry, error) {
	if err := r.fault("fstat", unsafePath); err != nil {
		if fd >= 0 {
			unix.Close(fd)
		}
		return nil, err
	}
	switch {
	case fd >= 0:
		return entryFor(dir, name, fd, unsafePath, created)
	case lean:
		return statEntry(dir, name, unsafePath, created)
	}
	return newEntry(dir, name, unsafePath, created)
}

// needsChown reports whether an entry whose stat is st must be given the
// Root's owner.
func (r *Root) needsChown(st *unix.Stat_t) bool {
	o := r.opts.Owner
	return o != nil && (int(st.Uid) != o.UID || int(st.Gid) != o.GID)
}

// syscall calls fn, unless a test's fault hook fails op on path first; an
// error of fn becomes a *PathError for op and path.
func (r *Root) syscall(op, path string, fn func() (int, error)) (int, error) {
	if err := r.fault(op, path); err != nil {
		return -1, err
	}
	fd, err := fn()
	if err != nil {
		return -1, &os.PathError{Op: op, Path: path, Err: err}
	}
	return fd, nil
}

// fault is the test hook (Options.fault) for op on path.
func (r *Root) fault(op, path string) error {
	if r.opts.fault == nil {
		return nil
	}
	if err := r.opts.fault(op, path); err != nil {
		return &os.PathError{Op: op, Path: path, Err: err}
	}
	return nil
}
