package rootfs

import (
	"errors"

	sentinels "github.com/go-nvc/nvc/internal/sentinel"
)

var (
	// ErrWrongType is matched when a path exists with another file type
	// than the operation needs (a symlink or FIFO where a file should be).
	ErrWrongType = errors.New("wrong file type")
	// ErrInvalidPath is matched when an unsafePath cannot name an entry to
	// create: it is empty, the root itself, ends in "..", or has ".."
	// after a component that had to be created.
	ErrInvalidPath = errors.New("invalid path")
	// ErrNotSupported is matched when the kernel lacks openat2 and
	// [ResolveOpenat2] forbids the fallback.
	ErrNotSupported = sentinels.Mark(errors.New("not supported by the kernel"), sentinels.ErrNotSupported)
)
