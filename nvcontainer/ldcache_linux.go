package nvcontainer

import (
	"fmt"
	"slices"

	"github.com/go-nvc/nvc/internal/rootfs"
	"github.com/go-nvc/nvc/ldcache"
)

// ldCachePath is where the container's loader cache is written.
const ldCachePath = "/etc/ld.so.cache"

// updateLDCache is step 8, on the confined thread: the rootfs's loader
// cache rebuilt with the plan's directories scanned first, swapped in
// through root (so undo puts the old file back). Nothing to scan: nothing
// to do.
func (a *applier) updateLDCache(root *rootfs.Root) error {
	u := a.plan.LDCache
	dirs := append(slices.Clip(u.FirstDirs), u.Dirs...)
	if len(dirs) == 0 {
		return nil
	}
	if err := a.at(StepLDCache, ldCachePath); err != nil {
		return err
	}
	if err := a.writeLDCache(root, dirs); err != nil {
		return stepError(StepLDCache, ldCachePath, err)
	}
	return nil
}

func (a *applier) writeLDCache(root *rootfs.Root, dirs []string) error {
	rootPath := a.ctr.Rootfs
	family, err := ldcache.DetectFamily(rootPath, "")
	if err != nil {
		return err
	}
	if family == ldcache.FamilyMusl {
		// Written through root, like the cache, so that undo restores it.
		file, data, err := ldcache.MuslPathFile(rootPath, "", dirs)
		if err != nil {
			return err
		}
		return root.WriteFile(file, data, 0o644)
	}
	// The image's own cache is reused for the directories unchanged
	// since it was written; dirs, where Apply mounted libraries, are
	// always scanned (a library mounted over an image file keeps the
	// directory's times).
	c, err := ldcache.Build(a.ctx, rootPath, &ldcache.BuildOptions{Dirs: dirs, Family: family, Reuse: ldCachePath, NoLinks: true})
	if err != nil {
		return err
	}
	b, err := c.MarshalBinary()
	if err != nil {
		return fmt.Errorf("encoding the cache: %w", err)
	}
	return root.WriteFile(ldCachePath, b, 0o644)
}
