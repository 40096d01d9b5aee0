package main

import (
	"log/slog"

	"github.com/spf13/pflag"

	"github.com/go-nvc/nvc/ldcache"
)

// updateLDCacheFlags declares update-ldcache's flags and returns its
// action: rebuild the container's ld.so.cache with the --folder dirs
// scanned first, in Go, writing only inside the container's root.
func updateLDCacheFlags(fs *pflag.FlagSet) func(string, *slog.Logger) error {
	folders := fs.StringArray("folder", nil, "container `DIR` holding driver libraries (repeatable)")
	ldconfig := fs.String("ldconfig-path", "", "accepted for NVIDIA's specs and ignored: no ldconfig is run")
	return func(rootfs string, log *slog.Logger) error {
		if *ldconfig != "" {
			log.Debug("ignoring --ldconfig-path: the cache is written in Go", "ldconfig-path", *ldconfig)
		}
		log.Debug("updating ld.so.cache", "root", rootfs, "folders", *folders)
		return ldcache.Update(rootfs, &ldcache.UpdateOptions{Dirs: *folders})
	}
}
