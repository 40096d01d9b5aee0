package rootfs

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// creation is what undo needs to remove one created entry, and to tell
// whether it is still what was created.
type creation struct {
	dir    *handle // a reference to the parent
	name   string
	st     unix.Stat_t
	target string // a symlink's content
	sized  bool   // regular file whose content is ours (WriteFile)
}

// record registers the entry just created as name in dir, whose fstat
// was st, on the undo stack.
func (r *Root) record(dir *handle, name string, st *unix.Stat_t, target string) {
	if r.opts.Undo == nil {
		return
	}
	c := newCreation(dir, name, st, target)
	r.opts.Undo.AddStep(c.undo, c.dir.release)
}

// newCreation notes name in dir; it takes a reference to dir. Of st only
// what a chown or chmod cannot change is used: device, inode, type and
// device number.
func newCreation(dir *handle, name string, st *unix.Stat_t, target string) *creation {
	return &creation{dir: dir.acquire(), name: name, st: *st, target: target}
}

// undo removes the entry if it is still what was created; anything else
// found there (replaced, written to, no longer empty, gone) is left alone.
func (c *creation) undo() error {
	defer c.dir.release()
	if !c.stillOurs() {
		return nil
	}
	flags := 0
	if c.st.Mode&unix.S_IFMT == unix.S_IFDIR {
		flags = unix.AT_REMOVEDIR
	}
	err := unix.Unlinkat(c.dir.fd, c.name, flags)
	if err == nil || err == unix.ENOENT || err == unix.ENOTEMPTY || err == unix.EEXIST {
		return nil
	}
	return fmt.Errorf("removing created %q: %w", c.name, &os.PathError{Op: "unlinkat", Path: c.dir.name + "/" + c.name, Err: err})
}

func (c *creation) stillOurs() bool {
	var st unix.Stat_t
	if unix.Fstatat(c.dir.fd, c.name, &st, unix.AT_SYMLINK_NOFOLLOW) != nil {
		return false
	}
	if st.Dev != c.st.Dev || st.Ino != c.st.Ino || st.Mode&unix.S_IFMT != c.st.Mode&unix.S_IFMT {
		return false
	}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFREG:
		return c.sized || st.Size == 0
	case unix.S_IFLNK:
		return c.linksToTarget()
	case unix.S_IFCHR:
		return st.Rdev == c.st.Rdev
	}
	return true
}

func (c *creation) linksToTarget() bool {
	buf := make([]byte, len(c.target)+1)
	n, err := unix.Readlinkat(c.dir.fd, c.name, buf)
	return err == nil && n <= len(c.target) && string(buf[:n]) == c.target
}
