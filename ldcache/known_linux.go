package ldcache

import (
	"fmt"
	"path"

	"golang.org/x/sys/unix"
)

// Known libraries (BuildOptions.Known). A caller that put a library
// into the root (Apply bind-mounts the host's driver libraries) may
// already have read it where it came from. Build takes such a Library
// for an added path instead of opening the file there, but only when
// the file at that name, looked at without following it, is the very
// file the Library was read from: same device, inode, size, mtime and
// ctime (one statx, where reading costs an open O_PATH, an fstat, a
// reopen, a read and two closes). A bind mount shows its source's inode,
// so the mounted library matches; anything else at the name (the image's
// own file, one renamed over the mount point by another namespace, the
// source rewritten since it was read) does not, and is read as usual.
// Facts for a path the caller did not add are ignored.

// knownMask asks statx for what identifies a file's content.
const knownMask = unix.STATX_TYPE | unix.STATX_INO | unix.STATX_SIZE | unix.STATX_MTIME | unix.STATX_CTIME

// ReadLibrary reads the library open at fd (a regular file, read with
// pread; its offset is left alone) as Build reads a library for goarch
// (empty: the running one) and returns what a loader cache entry needs
// of it, tied to the file's identity. A file that is no library of the
// target is not an error: its Library says so (Soname's false), and
// Build leaves the file out as it would on reading it.
func ReadLibrary(fd int, goarch string) (Library, error) {
	t, err := newTarget(goarch)
	if err != nil {
		return Library{}, fmt.Errorf("reading a library: %w", err)
	}
	var stx unix.Statx_t
	if err := unix.Statx(fd, "", unix.AT_EMPTY_PATH, knownMask, &stx); err != nil {
		return Library{}, fmt.Errorf("reading a library: statx: %w", err)
	}
	if stx.Mode&unix.S_IFMT != unix.S_IFREG {
		return Library{}, fmt.Errorf("reading a library: not a regular file (mode %#o)", stx.Mode)
	}
	size := stx.Size
	fr := newFileReader(fdReader(fd), make([]byte, scratchSize), func() (uint64, bool) { return size, true })
	info, ok := t.readLib(fr, "")
	l := Library{goarch: t.goarch, id: idOfStatx(&stx), info: info, listed: ok}
	l.aout = ok && info.flag&FlagTypeMask == 0
	return l, nil
}

func idOfStatx(stx *unix.Statx_t) fileID {
	return fileID{dev: statxDev(stx), ino: stx.Ino, size: int64(stx.Size),
		mtime: timespec{stx.Mtime.Sec, int64(stx.Mtime.Nsec)}, ctime: timespec{stx.Ctime.Sec, int64(stx.Ctime.Nsec)}}
}

// loadKnown indexes BuildOptions.Known's libraries for the added paths
// by directory identity and name, for this target.
func (b *builder) loadKnown() {
	if len(b.o.Known) == 0 || len(b.o.Added) == 0 {
		return
	}
	parents := map[string]dirKey{}
	for _, a := range b.o.Added {
		key := a
		l, ok := b.o.Known[key]
		if !ok {
			key = path.Clean("/" + a)
			l, ok = b.o.Known[key]
		}
		if !ok || l.goarch != b.t.goarch {
			continue
		}
		a = path.Clean("/" + a)
		dir, name := path.Split(a)
		if name == "" || name == "." || name == ".." {
			continue
		}
		k, ok := parents[dir]
		if !ok {
			st, err := b.stat(dir)
			if err != nil || st.Mode&unix.S_IFMT != unix.S_IFDIR {
				continue
			}
			k = dirKey{st.Dev, st.Ino}
			parents[dir] = k
		}
		if b.known == nil {
			b.known = map[dirKey]map[string]string{}
		}
		if b.known[k] == nil {
			b.known[k] = map[string]string{}
		}
		b.known[k][name] = key
	}
}

// knownFile is the classification of the regular file name of the
// directory from BuildOptions.Known, when the caller added it and it is
// still the file the Library was read from.
func (s *dirScan) knownFile(name string) (fileResult, bool) {
	key, ok := s.b.known[dirKey{s.d.dev, s.d.ino}][name]
	if !ok {
		return fileResult{}, false
	}
	l := s.b.o.Known[key]
	var stx unix.Statx_t
	if unix.Statx(s.fd, name, unix.AT_SYMLINK_NOFOLLOW|unix.AT_STATX_DONT_SYNC, knownMask, &stx) != nil ||
		stx.Mode&unix.S_IFMT != unix.S_IFREG || idOfStatx(&stx) != l.id {
		return fileResult{}, false
	}
	info := l.info
	if l.aout {
		info.soname = aoutSoname(name)
	}
	if knownHook != nil {
		knownHook(s.d.path + "/" + name)
	}
	return fileResult{info: info, ok: l.listed}, true
}
