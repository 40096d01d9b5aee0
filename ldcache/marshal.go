package ldcache

import (
	"encoding/binary"
	"fmt"
	"slices"
)

// DefaultGenerator is the generator string Build records.
const DefaultGenerator = "github.com/go-nvc/nvc/ldcache"

// MarshalBinary encodes the cache in c.Format with c.Order, laid out as
// glibc 2.36's ldconfig lays out its files (elf/cache.c save_cache): the
// same header fields, the same string table with shared suffixes, the
// entries in the order of c.Entries, and for the new format the extension
// section with c.Generator and the glibc-hwcaps names. c.Old and
// c.HWCapsDirs are ignored: the old table holds the entries without legacy
// hwcap bits, and the hwcaps names are those the entries use, sorted.
func (c *Cache) MarshalBinary() ([]byte, error) {
	if c.Format < FormatNew || c.Format > FormatOld {
		return nil, fmt.Errorf("encoding ld.so.cache: unknown format %d", c.Format)
	}
	if len(c.Entries) > maxReasonableLen/newEntrySize {
		return nil, fmt.Errorf("encoding ld.so.cache: %d entries is too many", len(c.Entries))
	}
	m := newMarshaler(c)
	return m.encode(), nil
}

// byteOrder is what both of encoding/binary's orders implement.
type byteOrder interface {
	binary.ByteOrder
	binary.AppendByteOrder
}

type marshaler struct {
	c       *Cache
	o       byteOrder
	strs    *strtab
	strIdx  []int32 // each entry's name and path in strs
	hwIndex map[string]uint32
	hwNames []string
}

// isHWCaps reports whether e is written as a glibc-hwcaps entry.
func isHWCaps(e *Entry) bool { return e.HWCaps != "" || e.HWCapsExtension() }

func newMarshaler(c *Cache) *marshaler {
	var o byteOrder = binary.LittleEndian
	if c.Order == binary.BigEndian {
		o = binary.BigEndian
	}
	m := &marshaler{c: c, o: o, strs: newStrtab(2*len(c.Entries) + 8), strIdx: make([]int32, 2*len(c.Entries)), hwIndex: map[string]uint32{}}
	for _, n := range c.seenHWCaps {
		m.strs.add(n)
	}
	for i := range c.Entries {
		e := &c.Entries[i]
		m.strIdx[2*i+1] = m.strs.add(e.Path)
		m.strIdx[2*i] = m.strs.add(e.Name)
		if isHWCaps(e) {
			if _, ok := m.hwIndex[e.HWCaps]; !ok {
				m.hwIndex[e.HWCaps] = 0
				m.hwNames = append(m.hwNames, e.HWCaps)
				m.strs.add(e.HWCaps)
			}
		}
	}
	slices.Sort(m.hwNames)
	for i, n := range m.hwNames {
		m.hwIndex[n] = uint32(i)
	}
	return m
}

// hwcap is the value written in the new table.
func (m *marshaler) hwcap(e *Entry) uint64 {
	if !isHWCaps(e) {
		return e.HWCap
	}
	return HWCapExtension | uint64(e.ISALevel())<<32 | uint64(m.hwIndex[e.HWCaps])
}

// legacy reports whether e carries legacy hwcap bits, which keep it out of
// the old table.
func legacy(e *Entry) bool { return !isHWCaps(e) && e.HWCap != 0 }

func (m *marshaler) encode() []byte {
	strs := m.strs.finalize()
	f := m.c.Format
	var oldPart []byte
	strOffset := uint32(0)
	if f != FormatOld {
		strOffset = uint32(newHeaderSize + newEntrySize*len(m.c.Entries))
	}
	if f != FormatNew {
		oldPart = m.oldTable(strOffset)
	}
	if f == FormatOld {
		return append(oldPart, strs...)
	}
	extOff := align(uint64(len(oldPart))+uint64(strOffset)+uint64(len(strs)), 4)
	size := extOff + extHeaderSize + 2*extSectionSize + uint64(4*len(m.hwNames)+len(m.c.Generator))
	out := append(make([]byte, 0, size), oldPart...)
	out = m.newHeader(out, uint32(len(strs)), uint32(extOff))
	out = m.newTable(out, strOffset)
	out = append(out, strs...)
	out = append(out, make([]byte, extOff-uint64(len(out)))...)
	return m.extension(out, strOffset, uint32(extOff))
}

func (m *marshaler) oldTable(strOffset uint32) []byte {
	n := m.oldCount()
	b := make([]byte, oldHeaderSize, oldHeaderSize+oldEntrySize*n)
	copy(b, oldMagic)
	m.o.PutUint32(b[12:], uint32(n))
	var last []byte
	for i := range m.c.Entries {
		if e := &m.c.Entries[i]; !legacy(e) {
			last = m.oldEntry(i, strOffset)
			b = append(b, last...)
		}
	}
	for len(b) < cap(b) {
		b = append(b, last...) // glibc repeats the last entry to pad
	}
	return b
}

// oldCount is the number of old-table entries: those without legacy
// hwcap bits, rounded up to even in a compat file so that the new header
// stays 8-byte aligned.
func (m *marshaler) oldCount() int {
	var n int
	for i := range m.c.Entries {
		if !legacy(&m.c.Entries[i]) {
			n++
		}
	}
	if m.c.Format == FormatCompat {
		n = (n + 1) &^ 1
	}
	return n
}

// nameOff and pathOff are entry i's string offsets in the table.
func (m *marshaler) nameOff(i int) uint32 { return m.strs.offset(m.strIdx[2*i]) }
func (m *marshaler) pathOff(i int) uint32 { return m.strs.offset(m.strIdx[2*i+1]) }

func (m *marshaler) oldEntry(i int, strOffset uint32) []byte {
	b := m.o.AppendUint32(make([]byte, 0, oldEntrySize), uint32(m.c.Entries[i].Flags))
	b = m.o.AppendUint32(b, strOffset+m.nameOff(i))
	return m.o.AppendUint32(b, strOffset+m.pathOff(i))
}

// newHeader appends the new format's header to dst.
func (m *marshaler) newHeader(dst []byte, lenStrings, extOff uint32) []byte {
	dst = append(dst, make([]byte, newHeaderSize)...)
	b := dst[len(dst)-newHeaderSize:]
	copy(b, newMagic)
	m.o.PutUint32(b[20:], uint32(len(m.c.Entries)))
	m.o.PutUint32(b[24:], lenStrings)
	b[28] = endianLittle
	if m.o == byteOrder(binary.BigEndian) {
		b[28] = endianBig
	}
	m.o.PutUint32(b[32:], extOff)
	return dst
}

func (m *marshaler) newTable(b []byte, strOffset uint32) []byte {
	for i := range m.c.Entries {
		e := &m.c.Entries[i]
		b = m.o.AppendUint32(b, uint32(e.Flags))
		b = m.o.AppendUint32(b, strOffset+m.nameOff(i))
		b = m.o.AppendUint32(b, strOffset+m.pathOff(i))
		b = m.o.AppendUint32(b, e.OSVersion)
		b = m.o.AppendUint64(b, m.hwcap(e))
	}
	return b
}

// extension appends the extension directory, the hwcaps name offsets and
// the generator string, in glibc's order.
func (m *marshaler) extension(b []byte, strOffset, extOff uint32) []byte {
	gen := m.c.Generator
	nsec := uint32(1)
	if len(m.hwNames) > 0 {
		nsec = 2
	}
	hwOff := extOff + extHeaderSize + nsec*extSectionSize
	hwSize := uint32(4 * len(m.hwNames))
	b = m.o.AppendUint32(b, extensionMagic)
	b = m.o.AppendUint32(b, nsec)
	b = m.section(b, tagGenerator, hwOff+hwSize, uint32(len(gen)))
	if nsec == 2 {
		b = m.section(b, tagGlibcHWCaps, hwOff, hwSize)
	}
	for _, n := range m.hwNames {
		b = m.o.AppendUint32(b, strOffset+m.strs.off(n))
	}
	return append(b, gen...)
}

func (m *marshaler) section(b []byte, tag, off, size uint32) []byte {
	b = m.o.AppendUint32(b, tag)
	b = m.o.AppendUint32(b, 0)
	b = m.o.AppendUint32(b, off)
	return m.o.AppendUint32(b, size)
}
