package ldcache

import (
	"encoding/binary"
	"slices"
	"strings"

	"golang.org/x/sys/unix"
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
	cache stamp
	byDir map[string][]Entry
	paths map[string]*pathState // lstatOlder's answers
	// intoInjected's answers, by directory path
	injected map[string]*injectedDir
	// recorded are the directories BuildOptions.Before recorded
	// unchanged since the cache was written
	recorded map[dirKey]bool
	// added are BuildOptions.Added's names, by directory
	added map[dirKey]map[string]bool
	// facts are the listings of the recorded directories, once reuseDir
	// has looked at them
	facts map[dirKey]*dirFacts
	// dirsByKey are byDir's directories by what they lead to now
	dirsByKey map[dirKey][]string
	// before are the path components BuildOptions.Before recorded
	before  map[string]stamp
	entries int // in the cache file
}

// older reports whether st is older than the cache file.
func (p *prior) older(st *unix.Stat_t) bool {
	s := stampOf(st)
	return s.olderThan(&p.cache)
}

// loadPrior reads the cache file to reuse; nil when there is none or it
// cannot be trusted to describe this root for this target.
func (b *builder) loadPrior() *prior {
	o := b.o
	if o.Reuse == "" || !o.NoLinks || o.Verbose != nil {
		return nil
	}
	data, st, err := b.r.readFileStat(o.Reuse, MaxCacheSize)
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
	p := &prior{cache: stampOf(&st), byDir: map[string][]Entry{}, entries: len(c.Entries)}
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
	b.prior = p
	if !b.useSnapshot(&st) {
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
	st, err := b.lstat(file)
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

// reusedHook is called with each directory reused (tests only).
var reusedHook func(dir string)

// priorEntries checks d's entries of the prior cache against its listing
// (kinds: the candidates not leading to an added or changed name, in
// fresh: those that do) and returns them as scanned entries, but for
// those whose file is fresh, dropped: their SONAMEs are read again (in a
// directory of glibc-hwcaps, where an entry names the file that won, it
// is scanned instead).
func (b *builder) priorEntries(d *dirEnt, spelled string, entries []Entry, kinds map[string]candKind, fresh map[string]bool) (out []scanned, dropped []Entry, ok bool) {
	var legacy uint64
	if d.hwcaps == "" {
		legacy = b.t.pathHWCap(d.path)
	}
	// appended to the Build's list in place; the caller keeps them only
	// if the directory is reused
	b.list = slices.Grow(b.list, len(entries))
	out = b.list[len(b.list):len(b.list)]
	names := make(map[string]bool, len(entries))
	for _, e := range entries {
		file := e.Path[len(spelled)+1:]
		if fresh[file] && d.hwcaps == "" && file == e.Name && e.HWCap == legacy && !names[e.Name] {
			names[e.Name] = true
			dropped = append(dropped, e)
			continue
		}
		if k, ok := kinds[file]; !ok || k == kindDangling || names[e.Name] {
			return nil, nil, false
		}
		names[e.Name] = true
		s := scanned{Entry: Entry{Name: e.Name, Path: d.path + "/" + file, Flags: e.Flags}, legacy: legacy, bitsHW: popcount(legacy)}
		if d.hwcaps == "" {
			if file != e.Name || e.HWCap != legacy {
				return nil, nil, false
			}
		} else {
			if !e.HWCapsExtension() || e.HWCaps != d.hwcaps {
				return nil, nil, false
			}
			s.hwcaps, s.HWCaps, s.legacy, s.bitsHW, s.isaLevel = true, d.hwcaps, 0, 0, e.ISALevel()
		}
		out = append(out, s)
	}
	return out, dropped, true
}
