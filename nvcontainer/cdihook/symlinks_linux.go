package cdihook

import (
	"context"
	"fmt"

	"github.com/go-nvc/nvc/internal/liblink"
	"github.com/go-nvc/nvc/internal/rootfs"
)

// CreateSymlinks makes each of opts.Links a symlink in the container whose
// root filesystem is rootfsPath, with the rule Apply (package nvcontainer)
// shares: a SONAME link (libnvidia-ml.so.1 -> libnvidia-ml.so.550.54.15)
// is created, or replaces a symlink the image has there, atomically; a
// regular file or directory the image ships there is left alone and is
// an error naming it. Any other link (libcuda.so -> libcuda.so.1) keeps
// whatever the image has at its path, and the result lists it in Kept.
// Missing parent directories are created; parents are resolved inside
// the root. The links are made in order; the first error stops the run
// and the result says what was kept until then. ctx is checked before
// each link.
func CreateSymlinks(ctx context.Context, rootfsPath string, opts *SymlinksOptions) (SymlinksResult, error) {
	var res SymlinksResult
	if opts == nil || len(opts.Links) == 0 {
		return res, context.Cause(ctx)
	}
	root, err := rootfs.Open(rootfsPath, nil)
	if err != nil {
		return res, err
	}
	defer root.Close()
	for _, l := range opts.Links {
		if err := context.Cause(ctx); err != nil {
			return res, err
		}
		kept, err := placeLink(root, l)
		if kept != "" {
			res.Kept = append(res.Kept, KeptLink{Link: l, Found: kept})
		}
		if err != nil {
			return res, err
		}
	}
	return res, nil
}

// placeLink makes one link with liblink's rule; kept says what the image
// has where an extra link was not made.
func placeLink(root *rootfs.Root, l Link) (kept string, err error) {
	l, err = l.clean()
	if err != nil {
		return "", fmt.Errorf("creating symlinks in rootfs %q: %w", root.Path(), err)
	}
	return liblink.Place(root, l.Target, l.Path, liblink.IsSONAME(l.Path, l.Target))
}
