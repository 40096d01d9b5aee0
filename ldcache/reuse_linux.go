package ldcache

import (
	"encoding/binary"
	"io"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/go-nvc/nvc/internal/inroot"
)

// Incremental builds (BuildOptions.Reuse; the rules are in the package
// documentation). "Older" means: mtime before the cache file's mtime AND
// ctime before its ctime, at nanosecond precision; an equal time counts
// as a change (the kernel's clock ticks coarser than a nanosecond). The
// mtime catches changes made before the file was extracted (tar keeps
// mtimes); the ctime, which no one can set back, any change made to the
// inode after the cache file was put in place.

// prior is the root's own cache file as an incremental build uses it.
type prior struct {
	mtime, ctime unix.Timespec
	byDir        map[string][]Entry
	paths        map[string]int  // lstatOlder's answers
	injected     map[string]bool // intoInjected's answers
}

// older reports whether st is older than the cache file.
func (p *prior) older(st *unix.Stat_t) bool {
	return before(st.Mtim, p.mtime) && before(st.Ctim, p.ctime)
}

func before(a, b unix.Timespec) bool {
	return a.Sec < b.Sec || (a.Sec == b.Sec && a.Nsec < b.Nsec)
}

// loadPrior reads the cache file to reuse; nil when there is none or it
// cannot be trusted to describe this root for this target.
func (b *builder) loadPrior() *prior {
	o := b.o
	if o.Reuse == "" || !o.NoLinks || o.Verbose != nil {
		return nil
	}
	f, st, err := inroot.OpenRegular(b.r.file, o.Reuse, 0)
	if err != nil {
		return nil
	}
	defer f.Close()
	if st.Size > MaxCacheSize {
		return nil
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxCacheSize+1))
	if err != nil {
		return nil
	}
	c, err := Parse(data)
	if err != nil || c.Format == FormatOld || (c.Order == binary.BigEndian) != (b.t.order == byteOrder(binary.BigEndian)) {
		return nil
	}
	native, ok := b.t.nativeFlags()
	if !ok {
		return nil
	}
	p := &prior{mtime: st.Mtim, ctime: st.Ctim, byDir: map[string][]Entry{}}
	found := false
	for _, e := range c.Entries {
		i := strings.LastIndexByte(e.Path, '/')
		if e.OSVersion != 0 || i < 0 {
			return nil
		}
		found = found || e.Flags == native
		p.byDir[e.Path[:i]] = append(p.byDir[e.Path[:i]], e)
	}
	if !found {
		return nil
	}
	return p
}

// elfMachines are the ELF machines of the targets' own libraries.
var elfMachines = map[string]uint16{"amd64": 62, "386": 3, "arm64": 183, "arm": 40,
	"ppc64le": 21, "s390x": 22, "riscv64": 243, "loong64": 258}

// nativeFlags are the flags t gives a library of its own machine and
// class (hard-float on arm).
func (t *target) nativeFlags() (int32, bool) {
	m, ok := elfMachines[t.goarch]
	if !ok || t.classify == nil {
		return 0, false
	}
	const armHardFloat = 0x05000400 // EABI5, EF_ARM_ABI_FLOAT_HARD
	return t.classify(nativeClass(t.is64), m, armHardFloat, flagLibc6)
}

// confOlder reports whether the configuration file is older than the
// cache, through its symlinks (lstat) and as resolved (stat).
func (b *builder) confOlder(file string) bool {
	st, err := b.r.lstat(file)
	if err != nil {
		return false
	}
	if !b.prior.older(&st) {
		return false
	}
	if st.Mode&unix.S_IFMT == unix.S_IFLNK {
		st, err = b.r.stat(file)
		return err == nil && b.prior.older(&st)
	}
	return true
}

// reuseDir adds d's entries from the prior cache and reports true when d
// is unchanged since it was written; false: d is to be scanned.
func (b *builder) reuseDir(d *dirEnt) bool {
	p := b.prior
	if p == nil || d.from == "<cmdline>" || !p.older(&d.st) || !b.pathOlder(d.path) {
		return false
	}
	fd, err := b.r.open(d.path, unix.O_RDONLY|unix.O_DIRECTORY)
	if err != nil {
		return false
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if unix.Fstat(fd, &st) != nil || st.Dev != d.dev || st.Ino != d.ino || !p.older(&st) {
		return false
	}
	ents, _ := readDir(fd, b.buf)
	s := newDirScan(b, d, fd, ents)
	kinds := map[string]candKind{}
	for _, c := range s.candidates() {
		kind := c.kind
		if kind == kindSlowLink {
			var ok bool
			if kind, ok = b.slowLinkOlder(s, c.name); !ok {
				return false
			}
		}
		if kind == kindDir {
			return false
		}
		kinds[c.name] = kind
	}
	for _, name := range s.ordered {
		if unix.Fstatat(fd, name, &st, unix.AT_SYMLINK_NOFOLLOW) != nil || st.Mode&unix.S_IFMT != unix.S_IFREG || !p.older(&st) {
			return false
		}
	}
	entries := p.byDir[d.path]
	if len(entries) == 0 && len(s.ordered) > 0 {
		return false
	}
	list, ok := b.priorEntries(d, entries, kinds)
	if ok {
		b.list = append(b.list, list...)
		if reusedHook != nil {
			reusedHook(d.path)
		}
	}
	return ok
}

// reusedHook is called with each directory reused (tests only).
var reusedHook func(dir string)

// priorEntries checks d's entries of the prior cache against its listing
// and returns them as scanned entries.
func (b *builder) priorEntries(d *dirEnt, entries []Entry, kinds map[string]candKind) ([]scanned, bool) {
	var legacy uint64
	if d.hwcaps == "" {
		legacy = b.t.pathHWCap(d.path)
	}
	out := make([]scanned, 0, len(entries))
	names := make(map[string]bool, len(entries))
	for _, e := range entries {
		file := e.Path[len(d.path)+1:]
		if k, ok := kinds[file]; !ok || k == kindDangling || names[e.Name] {
			return nil, false
		}
		names[e.Name] = true
		s := scanned{Entry: Entry{Name: e.Name, Path: e.Path, Flags: e.Flags}, legacy: legacy, bitsHW: popcount(legacy)}
		if d.hwcaps == "" {
			if file != e.Name || e.HWCap != legacy {
				return nil, false
			}
		} else {
			if !e.HWCapsExtension() || e.HWCaps != d.hwcaps {
				return nil, false
			}
			s.hwcaps, s.HWCaps, s.legacy, s.bitsHW, s.isaLevel = true, d.hwcaps, 0, 0, e.ISALevel()
		}
		out = append(out, s)
	}
	return out, true
}

// pathOlder reports whether every component of the path p (each prefix,
// not following its last symlink) is older than the cache, so that p
// leads where it led when the cache was written.
func (b *builder) pathOlder(p string) bool {
	parent := "/"
	for i := 1; i <= len(p); i++ {
		if (i < len(p) && p[i] != '/') || p[i-1] == '/' {
			continue
		}
		switch b.lstatOlder(p[:i]) {
		case compNewer:
			return false
		case compMissing:
			// Missing then too if the directory it would be in
			// (followed) has not changed since.
			st, err := b.r.stat(parent)
			return err == nil && b.prior.older(&st)
		}
		parent = p[:i]
	}
	return true
}

// intoInjected reports whether the path t lies in one of the directories
// the caller injects into (BuildOptions.Dirs): a library mounted over a
// file there shows the mounted file's times, which say nothing of the
// cache. By the device and inode of t's directory, remembered per path.
func (b *builder) intoInjected(t string) bool {
	i := strings.LastIndexByte(t, '/')
	dir := t[:i]
	if dir == "" {
		dir = "/"
	}
	if v, found := b.prior.injected[dir]; found {
		return v
	}
	v := false
	if st, err := b.r.stat(dir); err == nil {
		d := b.seenDirs[[2]uint64{st.Dev, st.Ino}]
		v = d != nil && d.from == "<cmdline>"
	}
	if b.prior.injected == nil {
		b.prior.injected = map[string]bool{}
	}
	b.prior.injected[dir] = v
	return v
}

// What lstatOlder finds.
const (
	compOlder = iota
	compNewer // or unreadable
	compMissing
)

// lstatOlder is lstat(p) against the cache, remembered per path.
func (b *builder) lstatOlder(p string) int {
	if v, found := b.prior.paths[p]; found {
		return v
	}
	st, err := b.r.lstat(p)
	v := compOlder
	switch {
	case err == unix.ENOENT:
		v = compMissing
	case err != nil || !b.prior.older(&st):
		v = compNewer
	}
	if b.prior.paths == nil {
		b.prior.paths = map[string]int{}
	}
	b.prior.paths[p] = v
	return v
}

// slowLinkOlder reports whether the symlink name of the directory, whose
// target is a path, leads where it led when the cache was written: every
// component of the target's path as the kernel walks it (the directory's
// path and the target joined, not cleaned: ".." is the physical parent)
// is older, and so is what it resolves to (inside the root). It returns
// what the link leads to: kindSlowLink for a regular file, kindDangling
// for nothing or something else (no entry), kindDir for a hwcap-named
// link to a directory (which a scan would queue). Only the first hop is
// checked component by component: a chain that goes on through a
// symlink elsewhere, repointed since to an older file, is not seen.
func (b *builder) slowLinkOlder(s *dirScan, name string) (candKind, bool) {
	t := s.links[name]
	if t == "" {
		return 0, false
	}
	if !strings.HasPrefix(t, "/") {
		t = s.d.path + "/" + t
	}
	if !b.pathOlder(t) || b.intoInjected(t) {
		return 0, false
	}
	st, err := b.r.stat(t)
	switch {
	case err == unix.ENOENT:
		return kindDangling, true
	case err != nil:
		return 0, false
	case st.Mode&unix.S_IFMT == unix.S_IFDIR:
		if s.d.hwcaps == "" && b.t.isHWCapName(name) {
			return kindDir, true
		}
		return kindDangling, true
	case st.Mode&unix.S_IFMT != unix.S_IFREG:
		return kindDangling, true
	}
	return kindSlowLink, b.prior.older(&st)
}
