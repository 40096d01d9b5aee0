package ldcache

import (
	"fmt"
	"io"
	"path"
	"sync"

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

// ReadLibrary reads the library r holds, a regular file whose identity
// id was taken (fstat, or stat of the name it was then opened by and
// found the same inode) before it was read, as Build reads a library for
// goarch (empty: the running one), and returns what a loader cache entry
// needs of it, tied to id: Build takes it only for a file with that
// identity, so a file changed after id was taken is read again. r is read
// at offsets within id.Size. A file that is no library of the target is
// not an error: its Library says so (Soname's false), and Build leaves
// the file out as it would on reading it.
func ReadLibrary(r io.ReaderAt, id FileID, goarch string) (Library, error) {
	t, err := newTarget(goarch)
	if err != nil {
		return Library{}, fmt.Errorf("reading a library: %w", err)
	}
	if id.Size < 0 {
		return Library{}, fmt.Errorf("reading a library: size %d", id.Size)
	}
	size := uint64(id.Size)
	buf := scratchPool.Get().(*[]byte)
	defer scratchPool.Put(buf)
	fr := newFileReader(r, *buf, func() (uint64, bool) { return size, true })
	info, ok := t.readLib(fr, "")
	l := Library{goarch: t.goarch, id: id, info: info, listed: ok}
	l.aout = ok && info.flag&FlagTypeMask == 0
	return l, nil
}

// scratchPool holds ReadLibrary's read buffers (scratchSize bytes), as a
// caller reads many libraries in a row.
var scratchPool = sync.Pool{New: func() any {
	b := make([]byte, scratchSize)
	return &b
}}

func idOfStatx(stx *unix.Statx_t) FileID {
	return FileID{Dev: statxDev(stx), Ino: stx.Ino, Size: int64(stx.Size),
		Mtime: stx.Mtime.Sec*1e9 + int64(stx.Mtime.Nsec), Ctime: stx.Ctime.Sec*1e9 + int64(stx.Ctime.Nsec)}
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
	if unix.Statx(s.fd, name, unix.AT_SYMLINK_NOFOLLOW, knownMask, &stx) != nil ||
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
