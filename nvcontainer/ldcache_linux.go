package nvcontainer

import (
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/go-nvc/nvc/driver"
	"github.com/go-nvc/nvc/internal/rootfs"
	"github.com/go-nvc/nvc/ldcache"
)

// The driver a plan was made from keeps its libraries' readings.
var _ LibrarySource = (*driver.Driver)(nil)

// ldCachePath is where the container's loader cache is written.
const ldCachePath = "/etc/ld.so.cache"

// ldCacheDirs are the directories step 8 puts first in the cache.
func (a *applier) ldCacheDirs() []string {
	u := a.plan.LDCache
	return append(slices.Clip(u.FirstDirs), u.Dirs...)
}

// snapshotLDCache records the rootfs's loader cache and the plan's
// library directories before Apply changes anything (ldcache.TakeSnapshot),
// so that step 8 can keep the image's entries for those directories and
// read only what Apply put there. Nil when there is nothing to record
// (step 8 then scans the directories).
func (a *applier) snapshotLDCache() *ldcache.Snapshot {
	dirs := a.ldCacheDirs()
	if len(dirs) == 0 {
		return nil
	}
	s, err := ldcache.TakeSnapshot(a.ctr.Rootfs, ldCachePath, dirs)
	if err != nil {
		return nil
	}
	return s
}

// updateLDCache is step 8, on the confined thread: the rootfs's loader
// cache rebuilt with the plan's directories scanned first, swapped in
// through root (so undo puts the old file back). before is
// snapshotLDCache's record. Nothing to scan: nothing to do.
func (a *applier) updateLDCache(root *rootfs.Root, before *ldcache.Snapshot) error {
	dirs := a.ldCacheDirs()
	if len(dirs) == 0 {
		return nil
	}
	if err := a.at(StepLDCache, ldCachePath); err != nil {
		return err
	}
	if err := a.writeLDCache(root, dirs, before); err != nil {
		return stepError(StepLDCache, ldCachePath, err)
	}
	return nil
}

func (a *applier) writeLDCache(root *rootfs.Root, dirs []string, before *ldcache.Snapshot) error {
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
	// since it was written and, where the snapshot says they were
	// unchanged before Apply, for dirs too: only what Apply added there
	// is read.
	c, err := ldcache.Build(a.ctx, rootPath, &ldcache.BuildOptions{Dirs: dirs, Family: family, Reuse: ldCachePath, NoLinks: true,
		Before: before, Added: addedPaths(a.plan, dirs), Known: a.knownLibraries()})
	if err != nil {
		return err
	}
	b, err := c.MarshalBinary()
	if err != nil {
		return fmt.Errorf("encoding the cache: %w", err)
	}
	return root.WriteFile(ldCachePath, b, 0o644)
}

// addedPaths are the names Apply puts into the directories dirs (the
// paths of its mounts, tmpfs and links there, and for those further
// down the first directory below one of dirs), as ldcache.BuildOptions
// Added wants them. Paths elsewhere are left out: the directories the
// loader cache scans there hold no library of the plan (every library
// directory of the plan is in dirs), and a directory Apply creates
// changes its parent's times, which an incremental build sees.
func addedPaths(p *Plan, dirs []string) []string {
	var out []string
	add := func(target string) {
		for _, d := range dirs {
			if rest, ok := strings.CutPrefix(target, d+"/"); ok && rest != "" {
				first, _, _ := strings.Cut(rest, "/")
				out = append(out, path.Join(d, first))
			}
		}
	}
	for _, m := range p.Mounts {
		add(m.Target)
	}
	for _, t := range p.Tmpfs {
		add(t.Target)
		for _, m := range t.Mounts {
			add(m.Target)
		}
	}
	for _, s := range p.Symlinks {
		add(s.Path)
	}
	return out
}

// knownLibraries are ApplyOptions.Libraries' readings of the plan's
// mounted sources, by target: ldcache.Build takes the one of a target it
// is told was added (addedPaths) when the file there is the very file
// read (device, inode, size, times), which a bind mount of the source
// is. Apply made that mount, from the confined thread, after opening the
// source; should anything else be at the target by the time the cache
// is built (a process outside the container's mount namespace renaming
// the placeholder away, which detaches the mount), its identity differs
// and Build reads it as usual. Nil without Libraries.
func (a *applier) knownLibraries() map[string]ldcache.Library {
	src := a.opts.Libraries
	if src == nil {
		return nil
	}
	isLib := func(m Mount) bool { return m.Kind == MountLibrary || m.Kind == MountLibrary32 }
	n := 0
	for _, m := range a.plan.Mounts {
		if isLib(m) {
			n++
		}
	}
	known := make(map[string]ldcache.Library, n)
	add := func(m Mount) {
		if !isLib(m) {
			return
		}
		if l, ok := src.LDCacheLibrary(m.Source); ok {
			known[path.Clean(m.Target)] = l
		}
	}
	for _, m := range a.plan.Mounts {
		add(m)
	}
	for _, t := range a.plan.Tmpfs {
		for _, m := range t.Mounts {
			add(m)
		}
	}
	return known
}
