package cdihook

import (
	"context"

	"github.com/go-nvc/nvc/internal/rootfs"
	"github.com/go-nvc/nvc/ldcache"
)

// LDCacheOptions are the directories [UpdateLDCache] adds.
type LDCacheOptions struct {
	// Folders are directories in the container holding the driver's
	// libraries, scanned after the compat dirs and before the image's own
	// configuration; always scanned, never taken from the old cache.
	// Nil: none (the cache then lists the compat dirs and what the image
	// configures).
	Folders []string
}

// LDCacheResult says what [UpdateLDCache] scanned first.
type LDCacheResult struct {
	// CompatDirs are the directories the root's
	// /etc/ld.so.conf.d/00-compat-*.conf files list (files in name order),
	// scanned before the folders.
	CompatDirs []string
}

// UpdateLDCache rebuilds the /etc/ld.so.cache of the container whose root
// filesystem is rootfsPath, in Go with package ldcache (no ldconfig is run),
// writing only inside the root: the compat dirs [EnableCUDACompat] listed
// are scanned first, then opts.Folders, then the root's own configuration,
// so that the image's newer libcuda.so.1 wins over the driver's.
//
// It also makes the SONAME symlinks of the libraries in the compat dirs
// and the folders, as ldconfig -n does, so that a library the spec
// mounted without its SONAME link (libnvidia-egl-wayland.so.1.1.13) is
// found under its SONAME (libnvidia-egl-wayland.so.1), as after the
// toolkit's ldconfig run; in the same scan that reads them for the cache
// (ldcache.UpdateOptions.LinkDirs), so each library is read once. Links
// are made through the descriptors of the directories, each resolved
// inside the root; a file in the way is left alone, and a read-only
// directory is skipped. Unlike ldconfig, the image's own directories are
// left as the image has them.
//
// The cache is updated incrementally: the old cache's entries are reused
// for the directories not changed since it was written. In a musl root
// the directories go first in its loader path file instead. ctx stops
// the scan; the cache is then left as it was. A nil opts means no
// folders.
func UpdateLDCache(ctx context.Context, rootfsPath string, opts *LDCacheOptions) (LDCacheResult, error) {
	if opts == nil {
		opts = &LDCacheOptions{}
	}
	first, err := compatDirs(rootfsPath)
	if err != nil {
		return LDCacheResult{}, err
	}
	res := LDCacheResult{CompatDirs: first}
	return res, ldcache.Update(ctx, rootfsPath, &ldcache.UpdateOptions{FirstDirs: first, Dirs: opts.Folders, LinkDirs: true, Incremental: true})
}

// compatDirs opens the root and reads its compat dirs.
func compatDirs(rootfsPath string) ([]string, error) {
	root, err := rootfs.Open(rootfsPath, nil)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	return readCompatConfs(root)
}
