package ldcache

import (
	"encoding/binary"
	"io"
	"math/bits"
	"slices"
	"strings"
)

// Family is the kind of system a root holds. It decides the directories
// the root's own ldconfig trusts without configuration.
type Family int

// Families.
const (
	// FamilyAuto asks Build and Update to call DetectFamily.
	FamilyAuto Family = iota
	// FamilyDebian is Debian and its derivatives (Ubuntu): glibc patched to
	// trust the multiarch directories /lib/<triplet> and /usr/lib/<triplet>,
	// then /lib and /usr/lib.
	FamilyDebian
	// FamilyLib64 is the glibc default (Fedora, RHEL, SUSE, Arch, …):
	// /lib64 and /usr/lib64 with their /lib (and on x86-64 /libx32)
	// siblings, in glibc's add_system_dir order.
	FamilyLib64
	// FamilyMusl is a musl libc system (Alpine): no ld.so.cache; its loader
	// reads /etc/ld-musl-<arch>.path.
	FamilyMusl
)

var familyNames = [...]string{"auto", "debian", "lib64", "musl"}

// String returns "auto", "debian", "lib64" or "musl".
func (f Family) String() string {
	if f >= 0 && int(f) < len(familyNames) {
		return familyNames[f]
	}
	return "unknown"
}

// TrustedDirs returns the directories ldconfig scans after its
// configuration file for a family and GOARCH (empty: the running one).
// Musl has none: it is configured by its path file.
func TrustedDirs(f Family, goarch string) []string {
	t, err := newTarget(goarch)
	if err != nil {
		return nil
	}
	return t.trustedDirs(f)
}

func (t *target) trustedDirs(f Family) []string {
	switch f {
	case FamilyDebian:
		return []string{"/lib/" + t.triplet, "/usr/lib/" + t.triplet, "/lib", "/usr/lib"}
	case FamilyLib64:
		if !t.is64 {
			return []string{"/lib", "/usr/lib"}
		}
		if t.goarch == "amd64" {
			return []string{"/lib", "/lib64", "/libx32", "/usr/lib", "/usr/lib64", "/usr/libx32"}
		}
		return []string{"/lib", "/lib64", "/usr/lib", "/usr/lib64"}
	}
	return nil
}

// BuildOptions tune Build. A nil *BuildOptions means all defaults.
type BuildOptions struct {
	// Config is the configuration file, a path inside the root. Empty:
	// "/etc/ld.so.conf".
	Config string
	// Dirs are directories (paths inside the root) scanned before the
	// configuration's, in order, as ldconfig's command-line directories
	// are. Where two directories hold the same SONAME for the same
	// architecture, the one scanned first comes first in the cache and is
	// the one the loader uses. Nil: none.
	Dirs []string
	// OnlyDirs scans Dirs alone: no configuration file and no trusted
	// directories (as ldconfig -n does). False: scan them all.
	OnlyDirs bool
	// Family chooses the trusted directories. Zero (FamilyAuto): detected
	// from the root with DetectFamily.
	Family Family
	// GOARCH names the machine whose ldconfig Build stands in for: it
	// decides which ELF files are listed and how they are tagged. Empty:
	// the running program's GOARCH.
	GOARCH string
	// NoLinks leaves the SONAME symlinks alone, as ldconfig -X: the root
	// is only read, and the cache still lists each library under its
	// SONAME path, a link that may not exist. False (the default, as plain
	// ldconfig -r): the links in the scanned directories are created,
	// replaced and removed.
	NoLinks bool
	// LinkDirs, with NoLinks, still makes the SONAME symlinks in Dirs
	// (and removes their stale ones), in the hwcap subdirectories found
	// in them too, while they are scanned: the links `ldconfig -n Dirs`
	// would make before the build, without reading those directories
	// twice. The configuration's and trusted directories are only read
	// (and may be reused); Dirs never are. False, or without NoLinks:
	// NoLinks alone decides.
	LinkDirs bool
	// Format is recorded in the returned Cache for writing. Zero: the new
	// format.
	Format Format
	// Generator is recorded in the new format's extension section. Empty:
	// DefaultGenerator.
	Generator string
	// Verbose receives the listing ldconfig -v prints on standard output:
	// each directory, then "\tSONAME -> file" per library. Nil: none.
	Verbose io.Writer
	// Reuse names the root's own cache file (a path inside the root,
	// usually "/etc/ld.so.cache"), whose entries Build takes for every
	// directory that has not changed since that file was written instead
	// of reading the directory's libraries again; the directories in Dirs
	// are scanned unless Before recorded them. The result is the cache a
	// full Build gives, except where the file lies (see the package
	// documentation, Incremental builds). Empty, or without NoLinks, or
	// with Verbose: every directory is scanned.
	Reuse string
	// Before, with Reuse, is the root as TakeSnapshot found it before the
	// caller's first change: the cache file and the directories the
	// caller then put files into. A directory it recorded older than the
	// cache is reused although it changed since: only its names in Added,
	// and what leads to them, are read. Nil (or a snapshot of another
	// cache file, or of this one since replaced): Dirs are always
	// scanned.
	Before *Snapshot
	// Added are the paths inside the root of everything the caller
	// created, replaced or mounted over since Before was taken in the
	// directories Build may scan: libraries, symlinks, mount points, and
	// the directories it made there on the way to deeper ones. A
	// directory holding one is scanned unless Before recorded it. Nil:
	// none.
	Added []string
	// Known are libraries the caller read where it took them from (with
	// ReadLibrary), by a path in Added (as spelled there, or cleaned): Build takes
	// such a Library instead of reading the file at that path when that
	// file, not followed, is the one the Library was read from (a bind
	// mount of it shows its inode), and reads the file otherwise. The
	// cache is the one Build gives without them. A path not in Added, or
	// a Library of another GOARCH, is ignored. Nil: every file is read.
	Known map[string]Library
}

// scanned is a cache entry with what ldconfig's sort needs.
type scanned struct {
	Entry
	hwcaps   bool // from a glibc-hwcaps subdirectory (name in Entry.HWCaps)
	legacy   uint64
	bitsHW   int
	isaLevel uint32
}

// compare is glibc's cache entry order (elf/cache.c compare): names
// descending by libcmp, then flags descending, glibc-hwcaps entries first
// (by subdirectory name), then the most specific legacy hwcap.
func (t *target) compare(a, b *scanned) int {
	if r := libcmp(b.Name, a.Name, t.signed); r != 0 {
		return r
	}
	switch {
	case a.Flags != b.Flags:
		return int(b.Flags) - int(a.Flags)
	case a.hwcaps != b.hwcaps:
		if a.hwcaps {
			return -1
		}
		return 1
	case a.hwcaps && a.HWCaps != b.HWCaps:
		return strings.Compare(a.HWCaps, b.HWCaps)
	case a.bitsHW != b.bitsHW:
		return b.bitsHW - a.bitsHW
	case a.legacy != b.legacy:
		if b.legacy > a.legacy {
			return 1
		}
		return -1
	}
	return 0
}

// finish sorts the scanned entries as ldconfig keeps its list and makes
// the Cache, with glibc-hwcaps indices assigned in name order.
func (t *target) finish(list []scanned, seen []string, o *BuildOptions) *Cache {
	// glibc inserts each new entry after every entry that does not
	// compare greater, which is a stable sort.
	order := make([]*scanned, len(list))
	for i := range list {
		order[i] = &list[i]
	}
	slices.SortStableFunc(order, t.compare)
	names := hwcapsNames(list)
	c := &Cache{Format: o.Format, Generator: o.Generator, HWCapsDirs: names, seenHWCaps: seen, Entries: make([]Entry, len(list))}
	if c.Generator == "" {
		c.Generator = DefaultGenerator
	}
	if t.order == byteOrder(binary.BigEndian) {
		c.Order = binary.BigEndian
	}
	for i, s := range order {
		c.Entries[i] = s.entry(names)
	}
	return c
}

// hwcapsNames returns the glibc-hwcaps subdirectories in use, sorted.
func hwcapsNames(list []scanned) []string {
	var names []string
	for i := range list {
		if list[i].hwcaps && !slices.Contains(names, list[i].HWCaps) {
			names = append(names, list[i].HWCaps)
		}
	}
	slices.Sort(names)
	return names
}

// entry is the cache entry with its final hwcap word.
func (s *scanned) entry(names []string) Entry {
	e := s.Entry
	e.HWCap = s.legacy
	if s.hwcaps {
		idx, _ := slices.BinarySearch(names, e.HWCaps)
		e.HWCap = HWCapExtension | uint64(s.isaLevel&isaLevelMask)<<32 | uint64(idx)
	}
	return e
}

func popcount(v uint64) int { return bits.OnesCount64(v) }
