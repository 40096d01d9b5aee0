package ldcache

import (
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
//
// It works in three passes so that the files are read in parallel but
// decided in directory order: pick the candidates (resolving symlinks to
// files of the same directory by name), classify the files, then apply
// glibc's rules entry by entry.
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
	s := newDirScan(b, d, fd, ents)
	cands := s.candidates()
	s.classifyAll()
	var libs []*dlib
	bySoname := map[string]*dlib{}
	for _, c := range cands {
		if l := s.decide(c); l != nil {
			libs = mergeLib(libs, bySoname, l, b.t.signed)
		}
	}
	// glibc keeps the list newest first.
	for i := len(libs) - 1; i >= 0; i-- {
		b.addLib(s, d, libs[i], hwcap)
	}
}

func (b *builder) addLib(ds *dirScan, d *dirEnt, l *dlib, hwcap uint64) {
	file := l.name
	if d.hwcaps == "" {
		if !l.isLink && (b.linksIn(d) || b.verbose != nil) {
			b.createLinks(ds.fd, d, l.name, l.soname, ds.linksTo(l.soname, l.name))
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
func mergeLib(libs []*dlib, bySoname map[string]*dlib, l *dlib, signed bool) []*dlib {
	p, ok := bySoname[l.soname]
	if !ok {
		bySoname[l.soname] = l
		return append(libs, l)
	}
	if (!l.isLink && p.isLink) || (l.isLink == p.isLink && libcmp(p.name, l.name, signed) < 0) {
		p.flag = mergeFlag(p.flag, l.flag)
		p.name, p.isLink, p.isaLevel = l.name, l.isLink, l.isaLevel
	}
	return libs
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
