package ldcache

import (
	"strings"

	"golang.org/x/sys/unix"
)

// candKind is what a directory entry turned out to be.
type candKind int

const (
	kindFile      candKind = iota // a regular file of the directory
	kindLocalLink                 // a symlink to a regular file of the directory
	kindDangling                  // a symlink that resolves to nothing
	kindSlowLink                  // a symlink resolved through the root
	kindDir                       // a directory
)

// cand is one directory entry ldconfig looks at.
type cand struct {
	name   string
	kind   candKind
	target string    // kindLocalLink: the file the link resolves to
	slow   *slowLink // kindSlowLink: what resolving it through the root gave
}

// slowLink is a symlink resolved through the root.
type slowLink struct {
	st     unix.Stat_t
	statOK bool
	res    fileResult
}

type fileResult struct {
	info libInfo
	ok   bool
}

// dirScan holds one directory's listing while it is scanned.
type dirScan struct {
	b       *builder
	d       *dirEnt
	fd      int
	ents    []dirent
	types   map[string]uint8       // name → d_type
	links   map[string]string      // readlink results, "" where unreadable
	files   map[string]*fileResult // regular files to classify, by name
	slow    []*cand
	ordered []string // files' keys in first-need order
	want    []bool   // by ents' index: wanted
	mnt     uint64   // the directory's mount (reused directories)
	// listOnly: candidates only lists and resolves, it queues nothing to
	// read (a reused directory reads what it needs itself)
	listOnly bool
}

func newDirScan(b *builder, d *dirEnt, fd int, ents []dirent) *dirScan {
	s := &dirScan{b: b, d: d, fd: fd, ents: ents, types: make(map[string]uint8, len(ents)),
		links: make(map[string]string, len(ents)/2), files: map[string]*fileResult{}}
	s.want = make([]bool, len(ents))
	for i, e := range ents {
		s.types[e.name] = e.typ
		s.want[i] = s.wanted(e)
	}
	return s
}

// candidates applies search_dir's name and type filters and resolves
// symlinks to files of the same directory by reading the links alone.
func (s *dirScan) candidates() []*cand {
	s.prefetchLinks()
	var out []*cand
	slab := make([]cand, 0, len(s.ents))
	for i, de := range s.ents {
		if !s.want[i] {
			continue
		}
		typ := de.typ
		if typ == unix.DT_UNKNOWN {
			var st unix.Stat_t
			if unix.Fstatat(s.fd, de.name, &st, unix.AT_SYMLINK_NOFOLLOW) != nil {
				continue
			}
			typ = dtOf(st.Mode)
		}
		slab = append(slab, cand{name: de.name})
		if c := s.cand(&slab[len(slab)-1], typ); c != nil {
			out = append(out, c)
		}
	}
	return out
}

func (s *dirScan) wanted(de dirent) bool {
	switch de.typ {
	case unix.DT_UNKNOWN, unix.DT_LNK, unix.DT_REG, unix.DT_DIR:
	default:
		return false
	}
	if !isDSO(de.name) && (de.typ == unix.DT_REG || (s.d.hwcaps == "" && !s.b.t.isHWCapName(de.name))) {
		return false
	}
	return !isPrelinkTemp(de.name)
}

func dtOf(mode uint32) uint8 {
	switch mode & unix.S_IFMT {
	case unix.S_IFREG:
		return unix.DT_REG
	case unix.S_IFDIR:
		return unix.DT_DIR
	case unix.S_IFLNK:
		return unix.DT_LNK
	}
	return unix.DT_UNKNOWN
}

// cand fills in c, named, as an entry of type typ; nil where it is none.
func (s *dirScan) cand(c *cand, typ uint8) *cand {
	name := c.name
	switch typ {
	case unix.DT_REG:
		c.kind = kindFile
		s.need(name)
	case unix.DT_DIR:
		c.kind = kindDir
	case unix.DT_LNK:
		c.kind, c.target = s.resolveLocal(name)
		switch c.kind {
		case kindLocalLink:
			s.need(c.target)
		case kindSlowLink:
			if !s.listOnly {
				c.slow = &slowLink{}
				s.slow = append(s.slow, c)
			}
		}
	default:
		return nil
	}
	return c
}

func (s *dirScan) need(name string) {
	if s.listOnly {
		return
	}
	if _, ok := s.files[name]; !ok {
		s.files[name] = &fileResult{}
		s.ordered = append(s.ordered, name)
	}
}

// linksTo reports whether the scan saw name lead to the regular file
// file of this directory: name is file itself, or a symlink whose chain
// of plain names ends at it.
func (s *dirScan) linksTo(name, file string) bool {
	if s.types[file] != unix.DT_REG {
		return false
	}
	if name == file {
		return true
	}
	if _, ok := s.links[name]; !ok || s.types[name] != unix.DT_LNK {
		return false
	}
	kind, target := s.resolveLocal(name)
	return kind == kindLocalLink && target == file
}

// maxHops is the kernel's limit on symlinks in one resolution.
const maxHops = 40

// resolveLocal follows a symlink while its targets are plain names of
// this directory. Anything else (a path, a directory, an unknown type) is
// left to resolution through the root.
func (s *dirScan) resolveLocal(name string) (candKind, string) {
	cur := name
	for range maxHops {
		t := s.readlink(cur)
		if t == "" || t == "." || t == ".." || strings.Contains(t, "/") {
			return kindSlowLink, ""
		}
		typ, found := s.types[t]
		switch {
		case !found:
			return kindDangling, ""
		case typ == unix.DT_REG:
			return kindLocalLink, t
		case typ != unix.DT_LNK:
			return kindSlowLink, ""
		}
		cur = t
	}
	return kindDangling, "" // ELOOP
}

// readlink returns the target of the symlink name, "" where it cannot
// be read.
func (s *dirScan) readlink(name string) string {
	t, ok := s.links[name]
	if !ok {
		t = readlinkAt(s.fd, name, s.b.head)
		s.links[name] = t
	}
	return t
}

// readlinkAt reads a symlink of the directory at fd, with buf as scratch;
// "" where it cannot be read.
func readlinkAt(fd int, name string, buf []byte) string {
	for {
		n, err := unix.Readlinkat(fd, name, buf)
		if err != nil {
			return ""
		}
		if n < len(buf) {
			return string(buf[:n])
		}
		if len(buf) >= 1<<16 {
			return ""
		}
		buf = make([]byte, 2*len(buf))
	}
}

// prefetchLinks reads the symlinks among the candidates in parallel, so
// that resolveLocal mostly finds them known.
func (s *dirScan) prefetchLinks() {
	var names []string
	for i, de := range s.ents {
		if de.typ == unix.DT_LNK && s.want[i] {
			names = append(names, de.name)
		}
	}
	targets := make([]string, len(names))
	parallelCheap(len(names), func(i int, buf []byte) {
		targets[i] = readlinkAt(s.fd, names[i], buf)
	}, &s.b.scratch)
	for i, n := range names {
		s.links[n] = targets[i]
	}
}

// decide applies glibc's rules to one candidate, in directory order.
func (s *dirScan) decide(c *cand) *dlib {
	switch c.kind {
	case kindDir:
		s.maybeHWCapDir(c.name, false, unix.Stat_t{})
	case kindDangling:
		s.b.removeStale(s.d, s.fd, c.name)
	case kindSlowLink:
		return s.decideSlowLink(c)
	case kindLocalLink:
		if r := s.files[c.target]; r.ok {
			return libEntry(c.name, linkInfo(r.info, c.name), true, s.d.flag)
		}
	case kindFile:
		if r := s.files[c.name]; r.ok {
			return libEntry(c.name, r.info, false, s.d.flag)
		}
	}
	return nil
}

func (s *dirScan) decideSlowLink(c *cand) *dlib {
	l := c.slow
	switch {
	case !l.statOK:
		s.b.removeStale(s.d, s.fd, c.name)
	case l.st.Mode&unix.S_IFMT == unix.S_IFDIR:
		s.maybeHWCapDir(c.name, true, l.st)
	case l.res.ok:
		return libEntry(c.name, l.res.info, true, s.d.flag)
	}
	return nil
}

// maybeHWCapDir queues a subdirectory with a legacy hwcap name.
func (s *dirScan) maybeHWCapDir(name string, isLink bool, st unix.Stat_t) {
	if s.d.hwcaps == "" && s.b.t.isHWCapName(name) {
		s.b.queueHWCapDir(s.fd, s.d, name, s.d.path+"/"+name, isLink, st)
	}
}

// linkInfo is a file's classification as read through a link: glibc
// names an a.out library after the name it opened.
func linkInfo(info libInfo, name string) libInfo {
	if info.flag&FlagTypeMask == 0 {
		info.soname = aoutSoname(name)
	}
	return info
}

// removeStale deletes a dangling "*.so.*" symlink, as ldconfig does when
// it may write links.
func (b *builder) removeStale(d *dirEnt, fd int, name string) {
	if b.linksIn(d) && strings.Contains(name, ".so.") {
		unix.Unlinkat(fd, name, 0)
	}
}

// queueHWCapDir appends a legacy hwcap or platform subdirectory ("tls",
// "x86_64", "haswell") to the directories to scan.
func (b *builder) queueHWCapDir(fd int, d *dirEnt, name, file string, isLink bool, st unix.Stat_t) {
	if !isLink && unix.Fstatat(fd, name, &st, unix.AT_SYMLINK_NOFOLLOW) != nil {
		return
	}
	b.addSingle(&dirEnt{path: file, flag: d.flag, dev: st.Dev, ino: st.Ino, from: d.from, line: d.line, st: st, links: d.links})
}
