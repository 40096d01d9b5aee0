package devices

import (
	"fmt"
	"os"

	pathrs "github.com/cyphar/filepath-securejoin/pathrs-lite"
)

// openInRoot opens unsafePath inside root (openat2 RESOLVE_IN_ROOT or its
// emulation) and checks that it is a regular file.
func openInRoot(root, unsafePath string) (*os.File, error) {
	f, err := pathrs.OpenInRoot(root, unsafePath)
	if err != nil {
		return nil, fmt.Errorf("opening %s under %s: %w", unsafePath, root, err)
	}
	st, err := f.Stat()
	if err == nil && !st.Mode().IsRegular() {
		err = fmt.Errorf("%w: %s is not a regular file (%v)", ErrInvalid, unsafePath, st.Mode().Type())
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("opening %s under %s: %w", unsafePath, root, err)
	}
	return f, nil
}
