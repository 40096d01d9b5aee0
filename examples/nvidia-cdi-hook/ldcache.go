//go:build !cgo

package main

import (
	"context"

	"github.com/spf13/pflag"

	"github.com/go-nvc/nvc/internal/rootfs"
	"github.com/go-nvc/nvc/ldcache"
)

// updateLDCacheFlags declares update-ldcache's flags and returns its
// action: rebuild the container's ld.so.cache in Go, writing only inside
// the container's root. The CUDA compat dirs enable-cuda-compat listed
// (its 00-compat-*.conf files) are scanned first, then the --folder dirs,
// then the rootfs's own configuration: the image's newer libcuda.so.1 wins
// over the driver's, as the toolkit's ld.so.conf.d order makes it.
func updateLDCacheFlags(fs *pflag.FlagSet) action {
	folders := fs.StringArray("folder", nil, "container `DIR` holding driver libraries (repeatable)")
	ldconfig := fs.String("ldconfig-path", "", "accepted for NVIDIA's specs and ignored: no ldconfig is run")
	return func(rootfsPath string, h *hookEnv) error {
		if *ldconfig != "" {
			h.log.Debug("ignoring --ldconfig-path: the cache is written in Go", "ldconfig-path", *ldconfig)
		}
		first, err := compatDirs(rootfsPath)
		if err != nil {
			return err
		}
		h.log.Debug("updating ld.so.cache", "root", rootfsPath, "compat", first, "folders", *folders)
		// Incremental: the image's cache is reused for the directories
		// not changed since it was written; the folders are always scanned.
		return ldcache.Update(context.Background(), rootfsPath, &ldcache.UpdateOptions{FirstDirs: first, Dirs: *folders, Incremental: true})
	}
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
