package ldcache

import (
	"fmt"
	"path"

	"golang.org/x/sys/unix"
)

// TakeSnapshot records, inside rootfs, the cache file (a path inside it;
// empty: "/etc/ld.so.cache") and the directories dirs (paths inside it,
// usually the ones the caller is about to put libraries into), as they
// are now: give it to an incremental Build or Update (Before) with the
// paths the caller then added. Take it before the first change to the
// root. A missing directory is recorded as missing (it will be scanned),
// and without a cache file of at least one entry's size nothing is
// recorded; paths are resolved inside rootfs as Build resolves them. It
// fails only when rootfs cannot be opened.
func TakeSnapshot(rootfs, cache string, dirs []string) (*Snapshot, error) {
	r, err := openRoot(rootfs)
	if err != nil {
		return nil, fmt.Errorf("recording the loader cache of %s: %w", rootfs, err)
	}
	defer r.close()
	if cache == "" {
		cache = "/etc/ld.so.cache"
	}
	s := &Snapshot{cachePath: cache}
	st, err := r.stat(cache)
	if err != nil || st.Mode&unix.S_IFMT != unix.S_IFREG || st.Size < minCacheSize {
		return s, nil // no cache to reuse: nothing to record
	}
	s.cache = stampOf(&st)
	for _, d := range dirs {
		if st, err := r.stat(d); err == nil && st.Mode&unix.S_IFMT == unix.S_IFDIR {
			s.dirs = append(s.dirs, stampOf(&st))
			s.recordPath(r, path.Clean("/"+d))
		}
	}
	return s, nil
}

// recordPath records the lstat of each component of the clean path p.
func (s *Snapshot) recordPath(r *root, p string) {
	for i := 1; i <= len(p); i++ {
		if i < len(p) && p[i] != '/' {
			continue
		}
		q := p[:i]
		if _, ok := s.paths[q]; ok {
			continue
		}
		st, err := r.lstat(q)
		if err != nil {
			return
		}
		if s.paths == nil {
			s.paths = map[string]stamp{}
		}
		s.paths[q] = stampOf(&st)
	}
}

func stampOf(st *unix.Stat_t) stamp {
	return stamp{dev: st.Dev, ino: st.Ino,
		mtime: timespec{st.Mtim.Sec, st.Mtim.Nsec}, ctime: timespec{st.Ctim.Sec, st.Ctim.Nsec}}
}

// minCacheSize is the smallest cache file that can hold an entry.
const minCacheSize = 16

// dirKey identifies a directory.
type dirKey [2]uint64

// useSnapshot takes from o.Before the directories recorded unchanged
// since the prior cache was written, if the cache file is the one it
// recorded, unchanged; and groups o.Added by the directory they are in.
// False: an added path's directory cannot be told (nothing is reused).
func (b *builder) useSnapshot(cache *unix.Stat_t) bool {
	p := b.prior
	if s := b.o.Before; s != nil && s.cachePath == b.o.Reuse && s.cache == stampOf(cache) {
		p.before = s.paths
		for i := range s.dirs {
			if s.dirs[i].olderThan(&p.cache) {
				if p.recorded == nil {
					p.recorded = map[dirKey]bool{}
				}
				p.recorded[dirKey{s.dirs[i].dev, s.dirs[i].ino}] = true
			}
		}
	}
	parents := map[string]dirKey{}
	for _, a := range b.o.Added {
		dir, name := path.Split(path.Clean("/" + a))
		if name == "" || name == "." || name == ".." {
			continue
		}
		k, ok := parents[dir]
		if !ok {
			st, err := b.stat(dir)
			if err == unix.ENOENT || err == unix.ENOTDIR {
				continue // nothing added there is in a directory
			}
			if err != nil {
				return false
			}
			k = dirKey{st.Dev, st.Ino}
			parents[dir] = k
		}
		if p.added == nil {
			p.added = map[dirKey]map[string]bool{}
		}
		if p.added[k] == nil {
			p.added[k] = map[string]bool{}
		}
		p.added[k][name] = true
	}
	return true
}
