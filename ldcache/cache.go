package ldcache

import (
	"encoding/binary"
	"strconv"
	"strings"

	"github.com/go-nvc/nvc/internal/sentinel"
)

// Format is one of the file layouts glibc's ldconfig writes (`-c FORMAT`).
type Format int

// The layouts. The zero value is the new format, ldconfig's default since
// glibc 2.32.
const (
	// FormatNew is "glibc-ld.so.cache1.1" alone.
	FormatNew Format = iota
	// FormatCompat is the old table followed by the new one, hidden in the
	// old table's string area.
	FormatCompat
	// FormatOld is "ld.so-1.7.0" alone (libc5 and glibc before 2.2).
	FormatOld
)

var formatNames = [...]string{"new", "compat", "old"}

// String returns the name ldconfig's -c option uses.
func (f Format) String() string {
	if f >= 0 && int(f) < len(formatNames) {
		return formatNames[f]
	}
	return "Format(" + strconv.Itoa(int(f)) + ")"
}

// ParseFormat maps ldconfig's -c names ("new", "compat", "old") to a Format.
func ParseFormat(s string) (Format, bool) {
	for i, n := range formatNames {
		if s == n {
			return Format(i), true
		}
	}
	return 0, false
}

// HWCapExtension is the hwcap bit that marks an entry from a glibc-hwcaps
// subdirectory; the low 32 bits then index the cache's list of those
// subdirectories (DL_CACHE_HWCAP_EXTENSION).
const HWCapExtension = uint64(1) << 62

// isaLevelMask covers the x86 ISA level glibc stores in bits 32..41 of an
// extension entry's hwcap.
const isaLevelMask = 0x3ff

// Entry is one library in the cache.
type Entry struct {
	// Name is the lookup key: the library's SONAME (or its file name when
	// it has none, or a development symlink's name such as "libz.so").
	Name string
	// Path is where the loader opens it, e.g. "/lib/x86_64-linux-gnu/libz.so.1".
	Path string
	// Flags holds the Type in the low byte and the Arch in the next.
	Flags int32
	// OSVersion is the minimum kernel from the library's ABI note, as
	// (os<<24 | major<<16 | minor<<8 | patch). glibc 2.36 writes zero.
	// Zero in the old format.
	OSVersion uint32
	// HWCap is the raw hardware-capability word: legacy hwcap bits (for
	// libraries in "tls" or platform subdirectories), or HWCapExtension
	// with an index for glibc-hwcaps libraries. Zero in the old format.
	HWCap uint64
	// HWCaps is the glibc-hwcaps subdirectory name ("x86-64-v3") of an
	// extension entry, as the loader reads it; empty otherwise.
	HWCaps string
}

// Arch returns the entry's architecture.
func (e *Entry) Arch() Arch { return Arch(uint32(e.Flags) & FlagRequiredMask) }

// Type returns the entry's library type.
func (e *Entry) Type() Type { return Type(uint32(e.Flags) & FlagTypeMask) }

// IsELF reports whether the ELF bit is set (libc6, libc5 and plain ELF
// entries), which libnvidia-container requires of every match.
func (e *Entry) IsELF() bool { return e.Flags&1 != 0 }

// HWCapsExtension reports whether the entry is a glibc-hwcaps entry: its
// hwcap word has HWCapExtension and no other bit above the ISA level.
func (e *Entry) HWCapsExtension() bool {
	return (e.HWCap>>32)&^isaLevelMask == HWCapExtension>>32
}

// ISALevel returns the x86 ISA level glibc recorded for a glibc-hwcaps
// entry (from the library's GNU property note); zero for other entries.
func (e *Entry) ISALevel() uint32 {
	if !e.HWCapsExtension() {
		return 0
	}
	return uint32(e.HWCap>>32) & isaLevelMask
}

// Cache is the content of an ld.so.cache file.
type Cache struct {
	// Format is the layout the file was read in (Parse) or is meant for.
	Format Format
	// Order is the byte order of the file's integers: nil or
	// binary.LittleEndian for little-endian, binary.BigEndian for big.
	Order binary.ByteOrder
	// Entries are the libraries the dynamic loader sees, in file order:
	// the new table, or the old one in an old-format file. ldconfig sorts
	// them (see Build); writers keep the order given.
	Entries []Entry
	// Old is the old-format table of an old or compat file, in file order;
	// nil for the new format. Writers ignore it and derive it from Entries.
	Old []Entry
	// Generator is the program that wrote the file, from the new format's
	// extension section ("ldconfig (Debian GLIBC 2.36-9+deb12u14) stable
	// release version 2.36"); empty when absent.
	Generator string
	// HWCapsDirs are the glibc-hwcaps subdirectory names in the file's
	// hwcaps section, in index order. Writers recompute them from Entries.
	HWCapsDirs []string

	// seenHWCaps are glibc-hwcaps names Build saw, used or not: glibc puts
	// all of them in the string table.
	seenHWCaps []string
}

// Find returns the entries whose Name is exactly soname and whose
// architecture is arch, in file order. The loader uses the first one its
// hardware accepts.
func (c *Cache) Find(soname string, arch Arch) []Entry {
	var out []Entry
	for _, e := range c.Entries {
		if e.Name == soname && e.Arch() == arch && e.IsELF() {
			out = append(out, e)
		}
	}
	return out
}

// FindPrefix returns, in file order, the ELF entries of architecture arch
// whose Name starts with one of prefixes — libnvidia-container's rule, by
// which "libcuda.so" matches "libcuda.so.1" and "libcuda.so.550.54.15".
func (c *Cache) FindPrefix(arch Arch, prefixes ...string) []Entry {
	var out []Entry
	for _, e := range c.Entries {
		if e.Arch() != arch || !e.IsELF() {
			continue
		}
		for _, p := range prefixes {
			if strings.HasPrefix(e.Name, p) {
				out = append(out, e)
				break
			}
		}
	}
	return out
}

// ErrNotSupported is returned for an architecture or system Build and
// Update cannot stand in for. It is the module's one "not supported":
// driver.ErrNotSupported is the same value, and devices'
// ErrNVMLNotSupported matches it.
var ErrNotSupported = sentinel.ErrNotSupported
