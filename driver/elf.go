package driver

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/go-nvc/nvc/ldcache"
)

// elfInfo is what library selection reads from an ELF shared object.
type elfInfo struct {
	class  elf.Class
	soname string
	needed []string
	abi    [3]uint32 // NT_GNU_ABI_TAG major, minor, patch; zero: no note
	// ld is the loader cache's reading of the same file
	// (ldcache.ReadLibrary); nil where it was not read
	ld *ldcache.Library
}

// errELF is matched by every error readELF returns about the file's bytes.
var errELF = errors.New("not a readable ELF shared object")

// Limits on what readELF reads from a file of untrusted content.
const (
	headRead   = 4096    // read first; holds the headers of any usual file
	maxPhdrs   = 1 << 16 // bytes of program headers
	maxSegment = 1 << 20 // bytes of a dynamic or note segment
	maxString  = 4096    // bytes of a string in the string table
)

// elfReader reads an ELF file the way the dynamic loader does: through its
// program headers (PT_DYNAMIC, PT_NOTE, PT_LOAD), so section headers may be
// missing. Every offset and size is checked against the file.
type elfReader struct {
	r     io.ReaderAt
	size  int64
	head  []byte
	bo    binary.ByteOrder
	is64  bool
	loads [][3]uint64 // PT_LOAD vaddr, offset, filesz
	dyn   [2]uint64   // PT_DYNAMIC offset, filesz
	notes [][2]uint64 // PT_NOTE offset, filesz
}

// readELF reads the class, SONAME, DT_NEEDED names and the NT_GNU_ABI_TAG
// note of the shared object r of the given size.
func readELF(r io.ReaderAt, size int64) (elfInfo, error) {
	info, _, err := readELFHead(r, size)
	return info, err
}

// readELFHead is readELF, also returning the first bytes of the file it
// read (up to headRead: all of a smaller file).
func readELFHead(r io.ReaderAt, size int64) (elfInfo, []byte, error) {
	e := &elfReader{r: r, size: size}
	info, err := e.readAll()
	return info, e.head, err
}

func (e *elfReader) readAll() (elfInfo, error) {
	info, err := e.header()
	if err != nil {
		return info, err
	}
	if err := e.programHeaders(); err != nil {
		return info, err
	}
	if err := e.dynamic(&info); err != nil {
		return info, err
	}
	info.abi = e.abiTag()
	return info, nil
}

func bad(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{errELF}, args...)...)
}

// at returns n bytes at off, from the head when it holds them.
func (e *elfReader) at(off, n uint64) ([]byte, error) {
	if off > uint64(e.size) || n > uint64(e.size)-off {
		return nil, bad("%d bytes at offset %#x past end of file (size %#x)", n, off, e.size)
	}
	if off+n <= uint64(len(e.head)) {
		return e.head[off : off+n], nil
	}
	b := make([]byte, n)
	if _, err := e.r.ReadAt(b, int64(off)); err != nil {
		return nil, err
	}
	return b, nil
}

func (e *elfReader) header() (elfInfo, error) {
	var err error
	if e.head, err = e.at(0, min(uint64(max(e.size, 0)), headRead)); err != nil {
		return elfInfo{}, err
	}
	h := e.head
	if len(h) < 52 || string(h[:4]) != elf.ELFMAG {
		return elfInfo{}, bad("no ELF magic")
	}
	info := elfInfo{class: elf.Class(h[elf.EI_CLASS])}
	switch elf.Data(h[elf.EI_DATA]) {
	case elf.ELFDATA2LSB:
		e.bo = binary.LittleEndian
	case elf.ELFDATA2MSB:
		e.bo = binary.BigEndian
	default:
		return info, bad("data encoding %d", h[elf.EI_DATA])
	}
	e.is64 = info.class == elf.ELFCLASS64
	if (!e.is64 && info.class != elf.ELFCLASS32) || (e.is64 && len(h) < 64) {
		return info, bad("class %d", h[elf.EI_CLASS])
	}
	if t := elf.Type(e.bo.Uint16(h[16:])); t != elf.ET_DYN {
		return info, bad("type %v, not a shared object", t)
	}
	return info, nil
}

// programHeaders records the PT_LOAD, PT_DYNAMIC and PT_NOTE segments.
func (e *elfReader) programHeaders() error {
	off, entSize, num := e.word(e.head[28:]), uint64(e.bo.Uint16(e.head[42:])), uint64(e.bo.Uint16(e.head[44:]))
	if e.is64 {
		off, entSize, num = e.bo.Uint64(e.head[32:]), uint64(e.bo.Uint16(e.head[54:])), uint64(e.bo.Uint16(e.head[56:]))
	}
	want := uint64(32)
	if e.is64 {
		want = 56
	}
	if entSize < want || entSize*num > maxPhdrs {
		return bad("%d program headers of %d bytes", num, entSize)
	}
	b, err := e.at(off, entSize*num)
	if err != nil {
		return err
	}
	for i := range num {
		e.segment(b[i*entSize:])
	}
	if e.dyn[1] == 0 {
		return bad("no PT_DYNAMIC segment")
	}
	return nil
}

func (e *elfReader) word(b []byte) uint64 {
	if e.is64 {
		return e.bo.Uint64(b)
	}
	return uint64(e.bo.Uint32(b))
}

// segment records one program header: p_type, then offset, vaddr and
// filesz at their class's positions.
func (e *elfReader) segment(p []byte) {
	typ := elf.ProgType(e.bo.Uint32(p))
	off, vaddr, filesz := e.word(p[4:]), e.word(p[8:]), e.word(p[16:])
	if e.is64 {
		off, vaddr, filesz = e.word(p[8:]), e.word(p[16:]), e.word(p[32:])
	}
	switch typ {
	case elf.PT_LOAD:
		e.loads = append(e.loads, [3]uint64{vaddr, off, filesz})
	case elf.PT_DYNAMIC:
		e.dyn = [2]uint64{off, filesz}
	case elf.PT_NOTE:
		e.notes = append(e.notes, [2]uint64{off, filesz})
	}
}

// dynTags are the dynamic entries readELF uses.
type dynTags struct {
	strtab, strsz uint64
	soname        uint64
	hasSoname     bool
	needed        []uint64 // string table offsets
}

// dynamic reads DT_SONAME and DT_NEEDED through DT_STRTAB.
func (e *elfReader) dynamic(info *elfInfo) error {
	d, err := e.dynTags()
	if err != nil {
		return err
	}
	off, ok := e.fileOffset(d.strtab, d.strsz)
	if !ok {
		return bad("DT_STRTAB %#x (size %#x) outside the loaded segments", d.strtab, d.strsz)
	}
	if d.hasSoname {
		if info.soname, err = e.str(off, d.strsz, d.soname); err != nil {
			return err
		}
	}
	for _, n := range d.needed {
		s, err := e.str(off, d.strsz, n)
		if err != nil {
			return err
		}
		info.needed = append(info.needed, s)
	}
	return nil
}

// dynTags walks the PT_DYNAMIC entries up to DT_NULL.
func (e *elfReader) dynTags() (dynTags, error) {
	var d dynTags
	b, err := e.at(e.dyn[0], min(e.dyn[1], maxSegment))
	if err != nil {
		return d, err
	}
	step := uint64(8)
	if e.is64 {
		step = 16
	}
	for i := uint64(0); i+step <= uint64(len(b)); i += step {
		tag, val := elf.DynTag(e.word(b[i:])), e.word(b[i+step/2:])
		switch tag {
		case elf.DT_NULL:
			return d, nil
		case elf.DT_STRTAB:
			d.strtab = val
		case elf.DT_STRSZ:
			d.strsz = val
		case elf.DT_SONAME:
			d.soname, d.hasSoname = val, true
		case elf.DT_NEEDED:
			d.needed = append(d.needed, val)
		}
	}
	return d, nil
}

// fileOffset maps the address range [vaddr, vaddr+size) to a file offset
// through the PT_LOAD segment that holds it.
func (e *elfReader) fileOffset(vaddr, size uint64) (uint64, bool) {
	for _, l := range e.loads {
		if vaddr >= l[0] && vaddr-l[0] <= l[2] && size <= l[2]-(vaddr-l[0]) {
			return l[1] + vaddr - l[0], true
		}
	}
	return 0, false
}

// str reads the NUL-terminated string at index idx of the string table at
// file offset tab of size tabSize.
func (e *elfReader) str(tab, tabSize, idx uint64) (string, error) {
	if idx >= tabSize {
		return "", bad("string index %#x past string table size %#x", idx, tabSize)
	}
	b, err := e.at(tab+idx, min(tabSize-idx, maxString))
	if err != nil {
		return "", err
	}
	s, _, ok := bytes.Cut(b, []byte{0})
	if !ok {
		return "", bad("unterminated string at offset %#x", tab+idx)
	}
	return string(s), nil
}

// abiTag returns (major, minor, patch) of the first NT_GNU_ABI_TAG note in
// the PT_NOTE segments; zero if there is none.
func (e *elfReader) abiTag() [3]uint32 {
	for _, n := range e.notes {
		b, err := e.at(n[0], min(n[1], maxSegment))
		if err != nil {
			continue
		}
		if v, ok := findABINote(b, e.bo); ok {
			return v
		}
	}
	return [3]uint32{}
}

// ntGNUABITag is NT_GNU_ABI_TAG's note type; its owner is "GNU".
const ntGNUABITag = 1

// findABINote walks the notes in b for a GNU ABI tag: descriptor words
// {os, major, minor, patch}.
func findABINote(b []byte, bo binary.ByteOrder) ([3]uint32, bool) {
	for len(b) >= 12 {
		nameSz, descSz, typ := uint64(bo.Uint32(b)), uint64(bo.Uint32(b[4:])), bo.Uint32(b[8:])
		nameEnd := 12 + align4(nameSz)
		descEnd := nameEnd + align4(descSz)
		if nameSz > uint64(len(b)) || descSz > uint64(len(b)) || descEnd > uint64(len(b)) {
			return [3]uint32{}, false
		}
		name := strings.TrimRight(string(b[12:12+nameSz]), "\x00")
		if typ == ntGNUABITag && name == "GNU" && descSz >= 16 {
			d := b[nameEnd:]
			return [3]uint32{bo.Uint32(d[4:]), bo.Uint32(d[8:]), bo.Uint32(d[12:])}, true
		}
		b = b[descEnd:]
	}
	return [3]uint32{}, false
}

func align4(n uint64) uint64 { return (n + 3) &^ 3 }

// needs reports whether one of info's DT_NEEDED names starts with prefix.
func (info elfInfo) needs(prefix string) bool {
	for _, n := range info.needed {
		if strings.HasPrefix(n, prefix) {
			return true
		}
	}
	return false
}
