package ldcache

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
)

// Layout constants of glibc's sysdeps/generic/dl-cache.h.
const (
	oldMagic      = "ld.so-1.7.0"
	oldHeaderSize = 16 // magic[11], pad, nlibs
	oldEntrySize  = 12 // flags, key, value

	newMagic      = "glibc-ld.so.cache1.1"
	newHeaderSize = 48
	newEntrySize  = 24 // flags, key, value, osversion, hwcap

	extensionMagic   = 0xeaa42174 // (uint32_t) -358342284
	extHeaderSize    = 8          // magic, count
	extSectionSize   = 16         // tag, flags, offset, size
	tagGenerator     = 0
	tagGlibcHWCaps   = 1
	endianMask       = 3
	endianInvalid    = 1
	endianLittle     = 2
	endianBig        = 3
	newAlign         = 8 // __alignof__ (struct cache_file_new) on 64-bit hosts
	maxReasonableLen = 1 << 30
)

// MaxCacheSize is the largest cache file Parse, Open and OpenInRoot
// accept, in bytes. Real caches are tens of kilobytes; a reader of a file
// that may be hostile should refuse a larger one before reading it.
const MaxCacheSize = 256 << 20

// Errors that Parse's errors match with errors.Is.
var (
	// ErrNotCache: the data starts with neither format's magic.
	ErrNotCache = errors.New("not an ld.so.cache file")
	// ErrCorrupt: a known format whose counts, offsets or strings do not
	// fit the data.
	ErrCorrupt = errors.New("corrupt ld.so.cache")
	// ErrEmpty: the file is empty (which ldconfig -p accepts silently). It
	// also matches ErrNotCache.
	ErrEmpty = errors.New("empty ld.so.cache")
)

// ParseError says what is wrong with a cache file and where.
type ParseError struct {
	// Offset is the file offset of the field found wrong.
	Offset int64
	// Msg describes the problem.
	Msg string
	// Err is ErrNotCache or ErrCorrupt.
	Err error
}

// Error says where the cache is wrong: "parsing ld.so.cache at offset
// 0x34: entry 0 key: string offset 0x1f000 past end of file …".
func (e *ParseError) Error() string {
	return fmt.Sprintf("parsing ld.so.cache at offset %#x: %s", e.Offset, e.Msg)
}

// Unwrap returns the sentinel the error matches.
func (e *ParseError) Unwrap() error { return e.Err }

// Is makes an empty-file error match ErrNotCache too.
func (e *ParseError) Is(target error) bool {
	return e.Err == ErrEmpty && target == ErrNotCache
}

func corrupt(off uint64, format string, args ...any) error {
	return &ParseError{Offset: int64(off), Msg: fmt.Sprintf(format, args...), Err: ErrCorrupt}
}

// Open reads and parses the cache file at path.
func Open(path string) (*Cache, error) {
	b, err := readLimited(path, MaxCacheSize)
	if err != nil {
		return nil, fmt.Errorf("reading ld.so.cache: %w", err)
	}
	c, err := Parse(b)
	if err != nil {
		return nil, fmt.Errorf("reading ld.so.cache %s: %w", path, err)
	}
	return c, nil
}

// readLimited reads the file at path like os.ReadFile, but a file of more
// than max bytes is refused: by its size before any read (a sparse file
// can claim a terabyte), or once max bytes are read.
func readLimited(path string, max int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	size := int64(512)
	if st, err := f.Stat(); err == nil && st.Mode().IsRegular() {
		if size = st.Size(); size > max {
			return nil, tooLarge(size)
		}
	}
	b := make([]byte, 0, size+1)
	for {
		n, err := f.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		switch {
		case int64(len(b)) > max:
			return nil, tooLarge(int64(len(b)))
		case err == io.EOF:
			return b, nil
		case err != nil:
			return nil, err
		case len(b) == cap(b):
			b = append(b, 0)[:len(b)]
		}
	}
}

func tooLarge(size int64) error {
	return &ParseError{Msg: fmt.Sprintf("%d bytes is larger than any cache (limit %d)", size, MaxCacheSize), Err: ErrCorrupt}
}

// Parse decodes a cache in any of the three layouts. It checks every count,
// offset and string against the data, so corrupt or hostile input gives an
// error (matching ErrNotCache or ErrCorrupt) instead of a panic, and it
// allocates in proportion to len(b). Parse does not keep b.
func Parse(b []byte) (*Cache, error) {
	if len(b) > MaxCacheSize {
		return nil, tooLarge(int64(len(b)))
	}
	p := &parser{b: b, s: string(b)}
	switch {
	case bytes.HasPrefix(b, []byte(newMagic)):
		return p.parseNewOnly()
	case bytes.HasPrefix(b, []byte(oldMagic)):
		return p.parseOld()
	case len(b) == 0:
		return nil, &ParseError{Msg: "empty file", Err: ErrEmpty}
	}
	return nil, &ParseError{Msg: fmt.Sprintf("unknown magic %q", prefix(b, 20)), Err: ErrNotCache}
}

func prefix(b []byte, n int) []byte {
	return b[:min(n, len(b))]
}

type parser struct {
	b     []byte
	s     string // b as a string: entries take substrings, so they share one copy
	order binary.ByteOrder
	nuls  []uint32 // positions of the NUL bytes, built when scans grow long
	// scanned counts the bytes string lookups have scanned.
	scanned uint64
}

func (p *parser) size() uint64 { return uint64(len(p.b)) }

func (p *parser) u32(off uint64) uint32 { return p.order.Uint32(p.b[off:]) }
func (p *parser) u64(off uint64) uint64 { return p.order.Uint64(p.b[off:]) }

// str returns the NUL-terminated string at base+rel, which field names
// (like "entry %d key", with idx) at file offset at.
func (p *parser) str(base uint64, rel uint32, field string, idx int, at uint64) (string, error) {
	off := base + uint64(rel)
	if off >= p.size() {
		return "", corrupt(at, field+": string offset %#x past end of file (string table at %#x, size %#x)", idx, rel, base, p.size())
	}
	end, ok := p.nulAfter(off)
	if !ok {
		return "", corrupt(at, field+": string at %#x is not NUL-terminated", idx, off)
	}
	return p.s[off:end], nil
}

// nulAfter returns the position of the first NUL at or after off. Once
// the scans add up to more than the file's size it indexes the file's
// NULs, so that many entries naming one long string (or its suffixes)
// cost a binary search each, not a scan.
func (p *parser) nulAfter(off uint64) (uint64, bool) {
	if p.nuls == nil && p.scanned <= 2*p.size()+4096 {
		n := bytes.IndexByte(p.b[off:], 0)
		if n < 0 {
			return 0, false
		}
		p.scanned += uint64(n) + 1
		return off + uint64(n), true
	}
	if p.nuls == nil {
		p.nuls = nulIndex(p.b)
	}
	i, _ := slices.BinarySearch(p.nuls, uint32(off))
	if i == len(p.nuls) {
		return 0, false
	}
	return uint64(p.nuls[i]), true
}

// guessOrder picks the byte order in which a count at off fits the data
// after hdr bytes of entries of size ent (little-endian when both do).
func (p *parser) guessOrder(off, hdr, ent uint64) binary.ByteOrder {
	for _, o := range []binary.ByteOrder{binary.LittleEndian, binary.BigEndian} {
		if uint64(o.Uint32(p.b[off:])) <= (p.size()-hdr)/ent {
			return o
		}
	}
	return binary.LittleEndian
}

func (p *parser) parseOld() (*Cache, error) {
	if p.size() < oldHeaderSize {
		return nil, corrupt(0, "old-format header truncated: file has %d bytes, need %d", p.size(), oldHeaderSize)
	}
	p.order = p.guessOrder(12, oldHeaderSize, oldEntrySize)
	n := uint64(p.u32(12))
	if n > (p.size()-oldHeaderSize)/oldEntrySize {
		return nil, corrupt(12, "old-format count %d needs %d bytes of entries, file has %d", n, n*oldEntrySize, p.size()-oldHeaderSize)
	}
	old, err := p.oldEntries(n)
	if err != nil {
		return nil, err
	}
	newOff := align(oldHeaderSize+n*oldEntrySize, newAlign)
	if p.size() > newOff+newHeaderSize && bytes.HasPrefix(p.b[newOff:], []byte(newMagic)) {
		c, err := p.parseNew(newOff)
		if err != nil {
			return nil, err
		}
		c.Format, c.Old = FormatCompat, old
		return c, nil
	}
	return &Cache{Format: FormatOld, Order: p.order, Entries: old, Old: old}, nil
}

func (p *parser) oldEntries(n uint64) ([]Entry, error) {
	strBase := oldHeaderSize + n*oldEntrySize
	out := make([]Entry, n)
	for i := range out {
		at := oldHeaderSize + uint64(i)*oldEntrySize
		e := &out[i]
		e.Flags = int32(p.u32(at))
		var err error
		if e.Name, err = p.str(strBase, p.u32(at+4), "old entry %d key", i, at+4); err != nil {
			return nil, err
		}
		if e.Path, err = p.str(strBase, p.u32(at+8), "old entry %d value", i, at+8); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func (p *parser) parseNewOnly() (*Cache, error) {
	if p.size() < newHeaderSize {
		return nil, corrupt(0, "header truncated: file has %d bytes, need %d", p.size(), newHeaderSize)
	}
	p.order = p.guessOrder(20, newHeaderSize, newEntrySize)
	return p.parseNew(0)
}

func (p *parser) newOrder(base uint64) error {
	switch p.b[base+28] & endianMask {
	case endianLittle:
		p.order = binary.LittleEndian
	case endianBig:
		p.order = binary.BigEndian
	case endianInvalid:
		return corrupt(base+28, "header flags %#x mark the cache invalid", p.b[base+28])
	}
	return nil
}

func (p *parser) parseNew(base uint64) (*Cache, error) {
	if err := p.newOrder(base); err != nil {
		return nil, err
	}
	n := uint64(p.u32(base + 20))
	if room := (p.size() - base - newHeaderSize) / newEntrySize; n > room {
		return nil, corrupt(base+20, "count %d needs %d bytes of entries, file has %d after the header", n, n*newEntrySize, p.size()-base-newHeaderSize)
	}
	c := &Cache{Format: FormatNew, Order: p.order}
	gen, dirs, err := p.extensions(base)
	if err != nil {
		return nil, err
	}
	c.Generator, c.HWCapsDirs = gen, dirs
	if c.Entries, err = p.newEntries(base, n, dirs); err != nil {
		return nil, err
	}
	return c, nil
}

func (p *parser) newEntries(base, n uint64, dirs []string) ([]Entry, error) {
	out := make([]Entry, n)
	for i := range out {
		at := base + newHeaderSize + uint64(i)*newEntrySize
		e := &out[i]
		e.Flags = int32(p.u32(at))
		e.OSVersion = p.u32(at + 12)
		e.HWCap = p.u64(at + 16)
		var err error
		if e.Name, err = p.str(base, p.u32(at+4), "entry %d key", i, at+4); err != nil {
			return nil, err
		}
		if e.Path, err = p.str(base, p.u32(at+8), "entry %d value", i, at+8); err != nil {
			return nil, err
		}
		if idx := uint32(e.HWCap); e.HWCapsExtension() && uint64(idx) < uint64(len(dirs)) {
			e.HWCaps = dirs[idx]
		}
	}
	return out, nil
}

// nulIndex lists the positions of b's NUL bytes.
func nulIndex(b []byte) []uint32 {
	nuls := make([]uint32, 0, bytes.Count(b, []byte{0}))
	for i, c := range b {
		if c == 0 {
			nuls = append(nuls, uint32(i))
		}
	}
	return nuls
}

func align(n, a uint64) uint64 { return (n + a - 1) &^ (a - 1) }
