package rootfs

import (
	"fmt"
	"io/fs"
	"os"

	"golang.org/x/sys/unix"
)

// Chmod gives the entry the permission bits of perm (set-id and sticky
// included) through its descriptor, never by path, so that nothing
// renamed into its place since Lookup is changed. A symlink is
// [ErrWrongType]: its target is never changed. What the entry's stat
// shows already right is not set again.
func (e *Entry) Chmod(perm fs.FileMode) error {
	if e.st.Mode&unix.S_IFMT == unix.S_IFLNK {
		return &os.PathError{Op: fmt.Sprintf("chmod %#o", unixPerm(perm)), Path: e.path, Err: fmt.Errorf("a symlink: %w", ErrWrongType)}
	}
	return chmodFd(e.fd, e.path, perm, &e.st, false)
}
