package devices

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"

	"github.com/go-nvc/nvc/internal/inroot"
)

// openInRoot opens unsafePath inside root with the module's one in-root
// opener (internal/inroot: openat2 RESOLVE_IN_ROOT or its emulation), as
// an O_PATH handle first: anything but a regular file is refused, matching
// ErrInvalid, before it is opened for reading.
func openInRoot(root, unsafePath string) (*os.File, error) {
	dir, err := os.OpenFile(root, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("opening %s under %s: %w", unsafePath, root, err)
	}
	defer dir.Close()
	f, _, err := inroot.OpenRegular(dir, unsafePath, 0)
	if errors.Is(err, inroot.ErrNotRegular) {
		err = fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	if err != nil {
		return nil, fmt.Errorf("opening %s under %s: %w", unsafePath, root, err)
	}
	return f, nil
}
