package mount

import (
	"errors"
	"fmt"

	"github.com/go-nvc/nvc/internal/sentinel"
)

var (
	// ErrNotSupported is matched when the kernel lacks the mount API the
	// chosen method needs.
	ErrNotSupported = sentinel.Mark(errors.New("not supported by the kernel"), sentinel.ErrNotSupported)
	// ErrNotConfined is matched when Attach or Detach runs outside
	// ns.Namespace.Run.
	ErrNotConfined = errors.New("not on a thread confined by ns.Run")
	// ErrSourceMismatch is matched when the source path, seen from the
	// container's namespace, is not the file opened on the host.
	ErrSourceMismatch = errors.New("source differs from the host file")
	// ErrTargetType is matched when the target's file type cannot take
	// the source (a directory onto a file, anything onto a symlink).
	ErrTargetType = errors.New("target type does not fit the source")
	// ErrNotMounted is matched when Detach finds the mount already gone.
	ErrNotMounted = errors.New("not mounted")
	// ErrAttached is matched when a Source is attached a second time.
	ErrAttached = errors.New("source already attached")
)

// Error is a failed mount operation with what it was applied to.
type Error struct {
	// Op is the system call or step: "open_tree", "mount_setattr",
	// "move_mount", "mount", "remount", "umount2", "fsmount", ...
	Op string
	// Source is the host path (or "tmpfs").
	Source string
	// Target is the target's path inside the rootfs, if any.
	Target string
	// Flags are the decoded flags or attributes of the operation.
	Flags string
	// Err is the underlying error, usually a syscall.Errno.
	Err error
}

// Error reads like: move_mount "/usr/lib/libcuda.so.1" onto
// "/usr/lib64/libcuda.so.1" (ro,nosuid,nodev): invalid argument.
func (e *Error) Error() string {
	s := fmt.Sprintf("%s %q", e.Op, e.Source)
	if e.Target != "" {
		s += fmt.Sprintf(" onto %q", e.Target)
	}
	if e.Flags != "" {
		s += " (" + e.Flags + ")"
	}
	return s + ": " + e.Err.Error()
}

// Unwrap returns the underlying error.
func (e *Error) Unwrap() error { return e.Err }
