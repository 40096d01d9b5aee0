package ldcache

import (
	"os"
	"strings"

	"golang.org/x/sys/unix"
)

// dlib is one SONAME found in a directory (glibc's struct dlib_entry).
type dlib struct {
	name, soname string
	flag         int32
	isLink       bool
	isaLevel     uint32
}

// searchDir is glibc's search_dir: it lists the libraries of one
// directory, keeping one file per SONAME, queues legacy hwcap
// subdirectories, and adds the libraries to the cache.
func (b *builder) searchDir(d *dirEnt) {
	var hwcap uint64
	if d.hwcaps == "" {
		hwcap = b.t.pathHWCap(d.path)
	}
	b.verbose.dir(d, hwcap)
	fd, err := b.r.open(d.path, unix.O_RDONLY|unix.O_DIRECTORY)
	if err != nil {
		return
	}
	defer unix.Close(fd)
	ents, _ := readDir(fd, b.buf)
	var libs []*dlib
	for _, de := range ents {
		if l := b.candidate(fd, d, de); l != nil {
			libs = mergeLib(libs, l, b.t.signed)
		}
	}
	// glibc keeps the list newest first.
	for i := len(libs) - 1; i >= 0; i-- {
		b.addLib(fd, d, libs[i], hwcap)
	}
}

func (b *builder) addLib(fd int, d *dirEnt, l *dlib, hwcap uint64) {
	file := l.name
	if d.hwcaps == "" {
		if !l.isLink {
			b.createLinks(fd, d.path, l.name, l.soname)
		}
		file = l.soname
	} else {
		b.verbose.hwcapsLib(l.soname, l.name)
	}
	s := scanned{Entry: Entry{Name: l.soname, Path: d.path + "/" + file, Flags: l.flag}, legacy: hwcap, bitsHW: popcount(hwcap)}
	if d.hwcaps != "" {
		s.hwcaps, s.HWCaps, s.legacy, s.bitsHW, s.isaLevel = true, d.hwcaps, 0, 0, l.isaLevel
	}
	b.list = append(b.list, s)
}

// mergeLib adds l to libs or, when its SONAME is there, keeps the better
// of the two: a file over a symlink, else the newer name by libcmp.
func mergeLib(libs []*dlib, l *dlib, signed bool) []*dlib {
	for _, p := range libs {
		if p.soname != l.soname {
			continue
		}
		if (!l.isLink && p.isLink) || (l.isLink == p.isLink && libcmp(p.name, l.name, signed) < 0) {
			p.flag = mergeFlag(p.flag, l.flag)
			p.name, p.isLink, p.isaLevel = l.name, l.isLink, l.isaLevel
		}
		return libs
	}
	return append(libs, l)
}

// mergeFlag is glibc's reconciliation of two files with one SONAME: plain
// ELF and libc5/libc6 upgrade or downgrade each other; other mismatches
// keep the first flag.
func mergeFlag(old, new int32) int32 {
	switch {
	case old == new:
		return old
	case old == flagELF && (new == flagLibc5 || new == flagLibc6):
		return new
	case (old == flagLibc5 || old == flagLibc6) && new == flagELF:
		return new
	}
	return old
}

// candidate examines one directory entry and returns the library it
// holds, or nil.
func (b *builder) candidate(fd int, d *dirEnt, de dirent) *dlib {
	switch de.typ {
	case unix.DT_UNKNOWN, unix.DT_LNK, unix.DT_REG, unix.DT_DIR:
	default:
		return nil
	}
	name := de.name
	if !isDSO(name) && (de.typ == unix.DT_REG || (d.hwcaps == "" && !b.t.isHWCapName(name))) {
		return nil
	}
	if isPrelinkTemp(name) {
		return nil
	}
	file := d.path + "/" + name
	mode, ok := b.modeOf(fd, name, de.typ)
	if !ok {
		return nil
	}
	isLink := mode == unix.S_IFLNK
	var target unix.Stat_t
	if isLink {
		var err error
		if target, err = b.r.stat(file); err != nil {
			b.removeStale(fd, name)
			return nil
		}
		mode = target.Mode & unix.S_IFMT
	}
	if d.hwcaps == "" && mode == unix.S_IFDIR && b.t.isHWCapName(name) {
		b.queueHWCapDir(fd, d, name, file, isLink, target)
		return nil
	}
	if mode != unix.S_IFREG && !isLink {
		return nil
	}
	return b.readLib(fd, name, file, isLink, d.flag)
}

func (b *builder) modeOf(fd int, name string, typ uint8) (uint32, bool) {
	switch typ {
	case unix.DT_LNK:
		return unix.S_IFLNK, true
	case unix.DT_REG:
		return unix.S_IFREG, true
	case unix.DT_DIR:
		return unix.S_IFDIR, true
	}
	var st unix.Stat_t
	if unix.Fstatat(fd, name, &st, unix.AT_SYMLINK_NOFOLLOW) != nil {
		return 0, false
	}
	return st.Mode & unix.S_IFMT, true
}

// removeStale deletes a dangling "*.so.*" symlink, as ldconfig does when
// it may write links.
func (b *builder) removeStale(fd int, name string) {
	if b.o.Links && strings.Contains(name, ".so.") {
		unix.Unlinkat(fd, name, 0)
	}
}

// queueHWCapDir appends a legacy hwcap or platform subdirectory ("tls",
// "x86_64", "haswell") to the directories to scan.
func (b *builder) queueHWCapDir(fd int, d *dirEnt, name, file string, isLink bool, st unix.Stat_t) {
	if !isLink && unix.Fstatat(fd, name, &st, unix.AT_SYMLINK_NOFOLLOW) != nil {
		return
	}
	b.addSingle(&dirEnt{path: file, flag: d.flag, dev: st.Dev, ino: st.Ino, from: d.from, line: d.line})
}

// readLib opens and classifies one candidate file.
func (b *builder) readLib(fd int, name, file string, isLink bool, dirFlag int32) *dlib {
	var lfd int
	var err error
	const flags = unix.O_RDONLY | unix.O_NONBLOCK | unix.O_NOCTTY
	if isLink {
		lfd, err = b.r.open(file, flags)
	} else {
		lfd, err = unix.Openat(fd, name, flags|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	}
	if err != nil {
		return nil
	}
	f := os.NewFile(uintptr(lfd), file)
	defer f.Close()
	info, ok := b.classify(f)
	if !ok {
		return nil
	}
	return libEntry(name, info, isLink, dirFlag)
}

func (b *builder) classify(f *os.File) (libInfo, bool) {
	var st unix.Stat_t
	if unix.Fstat(int(f.Fd()), &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
		return libInfo{}, false
	}
	if b.head == nil {
		b.head = make([]byte, 4096)
	}
	n, _ := f.ReadAt(b.head, 0)
	fr := &fileReader{r: f, size: uint64(st.Size), head: b.head[:n]}
	return b.t.readLib(fr, f.Name()[strings.LastIndexByte(f.Name(), '/')+1:])
}

// libEntry applies search_dir's rules to a classified file: the implied
// SONAME, which symlinks count as links, and the directory's type.
func libEntry(name string, info libInfo, isLink bool, dirFlag int32) *dlib {
	soname := info.soname
	if !info.hasSName {
		soname = implicitSoname(name, info.flag)
	}
	if isLink && name != soname && (!strings.HasSuffix(name, ".so") || !strings.HasPrefix(soname, name)) {
		isLink = false
	}
	if isLink {
		soname = name
	}
	flag := info.flag
	if flag == flagELF && (dirFlag == flagLibc5 || dirFlag == flagLibc6) {
		flag = dirFlag
	}
	return &dlib{name: name, soname: soname, flag: flag, isLink: isLink, isaLevel: info.isaLevel}
}
