package rootfs

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// creation is what undo needs to remove one created entry, and to tell
// whether it is still what was created.
type creation struct {
	dir    *os.File // a duplicate of the parent's descriptor
	name   string
	st     unix.Stat_t
	target string // a symlink's content
	sized  bool   // regular file whose content is ours (WriteFile)
}

// record registers f (just created as name in dir) on the undo stack.
func (r *Root) record(dir *os.File, name string, f *os.File, target string) error {
	if r.opts.Undo == nil {
		return nil
	}
	c, err := newCreation(dir, name, f, target)
	if err != nil {
		return err
	}
	r.opts.Undo.AddStep(c.undo, func() { c.dir.Close() })
	return nil
}

func newCreation(dir *os.File, name string, f *os.File, target string) (*creation, error) {
	c := &creation{name: name, target: target}
	if err := unix.Fstat(int(f.Fd()), &c.st); err != nil {
		return nil, &os.PathError{Op: "fstat", Path: f.Name(), Err: err}
	}
	fd, err := unix.FcntlInt(dir.Fd(), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return nil, os.NewSyscallError("fcntl", err)
	}
	c.dir = os.NewFile(uintptr(fd), dir.Name())
	return c, nil
}

// undo removes the entry if it is still what was created; anything else
// found there (replaced, written to, no longer empty, gone) is left alone.
func (c *creation) undo() error {
	defer c.dir.Close()
	if !c.stillOurs() {
		return nil
	}
	flags := 0
	if c.st.Mode&unix.S_IFMT == unix.S_IFDIR {
		flags = unix.AT_REMOVEDIR
	}
	err := unix.Unlinkat(int(c.dir.Fd()), c.name, flags)
	if err == nil || err == unix.ENOENT || err == unix.ENOTEMPTY || err == unix.EEXIST {
		return nil
	}
	return fmt.Errorf("removing created %q: %w", c.name, &os.PathError{Op: "unlinkat", Path: c.dir.Name() + "/" + c.name, Err: err})
}

func (c *creation) stillOurs() bool {
	var st unix.Stat_t
	if unix.Fstatat(int(c.dir.Fd()), c.name, &st, unix.AT_SYMLINK_NOFOLLOW) != nil {
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
	buf := make([]byte, unix.PathMax)
	n, err := unix.Readlinkat(int(c.dir.Fd()), c.name, buf)
	return err == nil && string(buf[:n]) == c.target
}
