package cdihook

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"

	"github.com/go-nvc/nvc/internal/rootfs"
)

// ChmodOptions are what [Chmod] changes.
type ChmodOptions struct {
	// Mode is the mode to give, as chmod(2) takes it (0o755, 0o1777):
	// bits above 0o7777 are an error.
	Mode uint32
	// Paths are absolute paths in the container (/dev/dri).
	Paths []string
}

// ChmodResult says what [Chmod] did.
type ChmodResult struct {
	// Changed are the paths whose mode was changed.
	Changed []string
	// Skipped are the paths left alone, each with why: missing, a
	// symlink, already the mode, or not permitted.
	Skipped map[string]string
}

// Chmod gives each of opts.Paths in the container whose root filesystem
// is rootfsPath the mode opts.Mode, as the toolkit's chmod hook (made for
// crun and nested device dirs such as /dev/dri): a missing path or one
// with the mode already is skipped, and so is EPERM. Unlike the
// toolkit's, each path is resolved inside the root, its last component
// is not followed (a symlink the image planted is skipped, never its
// target changed), and the mode is set through the descriptor opened,
// never by path again. A relative path is an error naming it.
func Chmod(ctx context.Context, rootfsPath string, opts *ChmodOptions) (ChmodResult, error) {
	res := ChmodResult{Skipped: map[string]string{}}
	if err := context.Cause(ctx); err != nil || opts == nil || len(opts.Paths) == 0 {
		return res, err
	}
	if opts.Mode&^0o7777 != 0 {
		return res, fmt.Errorf("chmod mode %#o has bits above 07777", opts.Mode)
	}
	for _, p := range opts.Paths {
		if !path.IsAbs(p) {
			return res, fmt.Errorf("chmod path %q is not absolute", p)
		}
	}
	root, err := rootfs.Open(rootfsPath, nil)
	if err != nil {
		return res, err
	}
	defer root.Close()
	for _, p := range opts.Paths {
		why, err := chmodOne(root, path.Clean(p), opts.Mode)
		switch {
		case err != nil:
			return res, err
		case why == "":
			res.Changed = append(res.Changed, p)
		default:
			res.Skipped[p] = why
		}
	}
	return res, nil
}

// chmodOne sets mode on p; it returns why p was skipped, "" if changed.
func chmodOne(root *rootfs.Root, p string, mode uint32) (string, error) {
	e, err := root.Lookup(p)
	if errors.Is(err, fs.ErrNotExist) {
		return "missing", nil
	}
	if err != nil {
		return "", err
	}
	defer e.Close()
	want := rootfs.FileMode(mode)
	switch {
	case e.Mode()&fs.ModeSymlink != 0:
		return "a symlink", nil
	case e.Mode()&(fs.ModePerm|fs.ModeSetuid|fs.ModeSetgid|fs.ModeSticky) == want:
		return "already the mode", nil
	}
	err = e.Chmod(want)
	if errors.Is(err, fs.ErrPermission) {
		return "not permitted", nil
	}
	if err != nil {
		return "", fmt.Errorf("rootfs %q: %w", root.Path(), err)
	}
	return "", nil
}
