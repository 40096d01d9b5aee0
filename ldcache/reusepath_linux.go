package ldcache

import (
	"strings"

	"golang.org/x/sys/unix"
)

// What a symlink of a reused directory leads to, since the cache was
// written.
type linkState int

const (
	linkOlder   linkState = iota // where it led then
	linkChanged                  // maybe elsewhere: scan its directory
	linkAdded                    // to or through an added name: read it
)

// What lstatOlder finds.
const (
	compOlder = iota
	compNewer // or unreadable
	compMissing
)

// pathState is lstatOlder's answer for one path.
type pathState struct {
	v   int
	dir bool   // a directory (not a symlink)
	reg bool   // a regular file
	mnt uint64 // the mount it is on (see mountOf)
	key dirKey // its identity, or what the symlink resolves to (resolved)
	// for a symlink: whether it was followed, and to a directory
	resolved, resolvedDir bool
}

// statxMask asks statx for what the reuse checks use.
const statxMask = unix.STATX_TYPE | unix.STATX_MODE | unix.STATX_INO | unix.STATX_MTIME | unix.STATX_CTIME | unix.STATX_MNT_ID

// olderX reports whether a statx result is older than the cache file.
func (p *prior) olderX(stx *unix.Statx_t) bool {
	s := stamp{mtime: timespec{stx.Mtime.Sec, int64(stx.Mtime.Nsec)}, ctime: timespec{stx.Ctime.Sec, int64(stx.Ctime.Nsec)}}
	return s.olderThan(&p.cache)
}

// mountOf is the mount a statx result is on; 0 where the kernel does
// not tell (before Linux 5.8), which then matches every mount.
func mountOf(stx *unix.Statx_t) uint64 {
	if stx.Mask&unix.STATX_MNT_ID == 0 {
		return 0
	}
	return stx.Mnt_id
}

func statxDev(stx *unix.Statx_t) uint64 { return unix.Mkdev(stx.Dev_major, stx.Dev_minor) }

// pathOlder reports whether every component of the path p (each prefix,
// not following its last symlink) is older than the cache, so that p
// leads where it led when the cache was written; a directory recorded by
// BuildOptions.Before counts as older. touched: a component is a name the
// caller added (p leads to or through it; the rest is not checked).
func (b *builder) pathOlder(p string) (ok, touched bool) {
	parent := "/"
	checkAdded := len(b.prior.added) > 0
	for i := 1; i <= len(p); i++ {
		if (i < len(p) && p[i] != '/') || p[i-1] == '/' {
			continue
		}
		q := p[:i]
		if checkAdded {
			if k, ok := b.dirKeyOf(parent); ok && b.prior.added[k][q[strings.LastIndexByte(q, '/')+1:]] {
				return true, true
			}
		}
		switch b.lstatOlder(q).v {
		case compNewer:
			return false, false
		case compMissing:
			// Missing then too if the directory it would be in
			// (followed) has not changed since.
			st, err := b.stat(parent)
			return err == nil && (b.prior.older(&st) || b.prior.recorded[dirKey{st.Dev, st.Ino}]), false
		}
		parent = q
	}
	return true, false
}

// lstatOlder is lstat(p) against the cache, remembered per path.
func (b *builder) lstatOlder(p string) *pathState {
	if v := b.prior.paths[p]; v != nil {
		return v
	}
	var stx unix.Statx_t
	err := b.r.lstatx(p, &stx)
	ps := &pathState{v: compOlder}
	switch {
	case err == unix.ENOENT:
		ps.v = compMissing
	case err != nil:
		ps.v = compNewer
	default:
		dev := statxDev(&stx)
		ps.mnt = mountOf(&stx)
		switch stx.Mode & unix.S_IFMT {
		case unix.S_IFDIR:
			ps.dir, ps.key = true, dirKey{dev, stx.Ino}
		case unix.S_IFREG:
			ps.reg = true
		}
		older := b.prior.olderX(&stx)
		if rec, ok := b.prior.before[p]; ok && rec.dev == dev && rec.ino == stx.Ino {
			// as the caller found it, before its own changes
			older = rec.olderThan(&b.prior.cache)
		}
		if !older && !(ps.dir && b.prior.recorded[ps.key]) {
			ps.v = compNewer
		}
	}
	if b.prior.paths == nil {
		b.prior.paths = map[string]*pathState{}
	}
	b.prior.paths[p] = ps
	return ps
}

// dirKeyOf is the identity of the directory the path p resolves to.
func (b *builder) dirKeyOf(p string) (dirKey, bool) {
	ps := b.lstatOlder(p)
	if ps.dir {
		return ps.key, true
	}
	if !ps.resolved {
		ps.resolved = true
		if st, err := b.stat(p); err == nil && st.Mode&unix.S_IFMT == unix.S_IFDIR {
			ps.key, ps.resolvedDir = dirKey{st.Dev, st.Ino}, true
		}
	}
	return ps.key, ps.resolvedDir
}

// injectedDir is intoInjected's answer for one directory path.
type injectedDir struct {
	key      dirKey
	injected bool
}

// intoInjected tells whether the path t, in one of the directories the
// caller changed (BuildOptions.Dirs, or holding an added name), leads
// where it led when the cache was written: a library mounted over a file
// there shows the mounted file's times, which say nothing of the cache.
// Only in a directory Before recorded, already looked at, is a name not
// added and not leading elsewhere known unchanged.
func (b *builder) intoInjected(t string) linkState {
	i := strings.LastIndexByte(t, '/')
	dir, name := t[:i], t[i+1:]
	if dir == "" {
		dir = "/"
	}
	e := b.prior.injected[dir]
	if e == nil {
		e = &injectedDir{}
		if st, err := b.stat(dir); err == nil {
			e.key = dirKey{st.Dev, st.Ino}
			d := b.seenDirs[[2]uint64(e.key)]
			e.injected = (d != nil && d.from == "<cmdline>") || len(b.prior.added[e.key]) > 0
		}
		if b.prior.injected == nil {
			b.prior.injected = map[string]*injectedDir{}
		}
		b.prior.injected[dir] = e
	}
	if !e.injected {
		return linkOlder
	}
	f := b.prior.facts[e.key]
	switch {
	case f == nil:
		return linkChanged
	case f.touched[name]:
		return linkAdded
	}
	typ, present := f.types[name]
	if !present || typ == unix.DT_REG || typ == unix.DT_DIR {
		return linkOlder
	}
	if k, ok := f.kinds[name]; typ == unix.DT_LNK && ok && (k == kindLocalLink || k == kindDangling) {
		return linkOlder
	}
	return linkChanged
}

// slowLinkOlder tells whether the symlink name of the directory, whose
// target is a path, leads where it led when the cache was written: every
// component of the target's path as the kernel walks it (the directory's
// path and the target joined, not cleaned: ".." is the physical parent)
// is older, and so is what it resolves to (inside the root, on the
// directory's mount). It returns what the link leads to: kindSlowLink for
// a regular file, kindDangling for nothing or something else (no entry),
// kindDir for a hwcap-named link to a directory (which a scan would
// queue). Only the first hop is checked component by component: a chain
// that goes on through a symlink elsewhere, repointed since to an older
// file, is not seen.
func (b *builder) slowLinkOlder(s *dirScan, name string) (candKind, linkState) {
	t := s.links[name]
	if t == "" {
		return 0, linkChanged
	}
	if !strings.HasPrefix(t, "/") {
		t = s.d.path + "/" + t
	}
	ok, touched := b.pathOlder(t)
	switch {
	case !ok:
		return 0, linkChanged
	case touched:
		return kindSlowLink, linkAdded
	}
	if st := b.intoInjected(t); st != linkOlder {
		return kindSlowLink, st
	}
	if ps := b.prior.paths[t]; ps != nil && ps.reg {
		// not a symlink: what lstat found is what the link leads to
		if ps.v != compOlder || ps.mnt != s.mnt {
			return 0, linkChanged
		}
		return kindSlowLink, linkOlder
	}
	var stx unix.Statx_t
	err := b.r.statx(t, &stx)
	switch {
	case err == unix.ENOENT:
		return kindDangling, linkOlder
	case err != nil:
		return 0, linkChanged
	case stx.Mode&unix.S_IFMT == unix.S_IFDIR:
		if s.d.hwcaps == "" && b.t.isHWCapName(name) {
			return kindDir, linkOlder
		}
		return kindDangling, linkOlder
	case stx.Mode&unix.S_IFMT != unix.S_IFREG:
		return kindDangling, linkOlder
	case !b.prior.olderX(&stx) || mountOf(&stx) != s.mnt:
		return 0, linkChanged
	}
	return kindSlowLink, linkOlder
}
