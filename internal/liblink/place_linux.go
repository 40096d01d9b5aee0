package liblink

import (
	"errors"
	"io/fs"

	"github.com/go-nvc/nvc/internal/rootfs"
)

// Place makes linkPath, a path in root, a symlink to target under the
// package's rule; soname says which kind of link it is (see IsSONAME).
// kept is non-empty when an extra link was not made because the image
// has something else there: it says what ("regular file", "symlink to
// libcuda.so.1.stub"). The error of a SONAME link refused names the path
// and what is there, and matches rootfs.ErrWrongType.
func Place(root *rootfs.Root, target, linkPath string, soname bool) (kept string, err error) {
	if soname {
		return "", root.Link(target, linkPath, true) // its error names the path and the type there
	}
	err = root.Link(target, linkPath, false)
	if err == nil {
		return "", nil
	}
	if !errors.Is(err, fs.ErrExist) && !errors.Is(err, rootfs.ErrWrongType) {
		return "", err
	}
	if what := describe(root, linkPath); what != "" {
		return what, nil
	}
	return "", err
}

// describe says what is at unsafePath in root, without following it; ""
// when nothing can be looked up there.
func describe(root *rootfs.Root, unsafePath string) string {
	e, err := root.Lookup(unsafePath)
	if err != nil {
		return ""
	}
	defer e.Close()
	switch m := e.Mode(); {
	case m.IsRegular():
		return "regular file"
	case m.IsDir():
		return "directory"
	case m&fs.ModeSymlink != 0:
		return "symlink"
	default:
		return "file of type " + m.Type().String()
	}
}
