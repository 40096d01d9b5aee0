package tegra

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/go-nvc/nvc/internal/inroot"
)

// openRoot opens root to resolve paths inside it (internal/inroot).
func openRoot(root string) (*os.File, error) {
	return os.OpenFile(root, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
}

// listDir is the entries of the directory p inside root, sorted by name.
func listDir(root, p string) ([]os.DirEntry, error) {
	dir, err := openRoot(root)
	if err != nil {
		return nil, err
	}
	defer dir.Close()
	fd, err := inroot.Open(dir, p, unix.O_RDONLY|unix.O_DIRECTORY)
	if pe := (*os.PathError)(nil); errors.As(err, &pe) {
		err = pe.Err // the emulated walk's
	}
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: p, Err: err}
	}
	d := os.NewFile(uintptr(fd), p)
	defer d.Close()
	ents, err := d.ReadDir(-1)
	slices.SortFunc(ents, func(a, b os.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	return ents, err
}

// parseIn parses the regular file p inside dir (nil: the host path p),
// refusing anything else unopened; name is p's name in entries and
// errors.
func parseIn(dir *os.File, p, name string) ([]Entry, error) {
	f, _, err := inroot.OpenRegular(dir, p, 0)
	if err != nil {
		return nil, fmt.Errorf("reading mount spec %s: %w", name, err)
	}
	defer f.Close()
	return Parse(f, name)
}

// orRoot is root, "/" for "".
func orRoot(root string) string {
	if root == "" {
		return "/"
	}
	return root
}
