package elfwriter

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
)

const page = 0x1000

type section struct {
	name      string
	typ       elf.SectionType
	flags     elf.SectionFlag
	addr, off uint64
	data      []byte
	link      uint32
	info      uint32
	align     uint64
	entsize   uint64
	nameOff   uint32
}

type prog struct {
	typ         elf.ProgType
	flags       elf.ProgFlag
	off, addr   uint64
	size, align uint64
}

func (w *writer) sizes() (ehdr, phdr, shdr, dyn, sym int) {
	if w.is64() {
		return 64, 56, 64, 16, 24
	}
	return 52, 32, 40, 8, 16
}

func (w *writer) build() []byte {
	ehdrSize, phdrSize, shdrSize, dynSize, symSize := w.sizes()
	exe := w.o.Interp != ""
	notes := w.notes()

	nprog := 4 + len(notes) // LOAD, LOAD, DYNAMIC, GNU_STACK, NOTEs
	if exe {
		nprog += 2 // PHDR, INTERP
	}
	off := ehdrSize + nprog*phdrSize

	var secs []*section
	place := func(s *section) *section {
		off = align(off, int(s.align))
		s.off, s.addr = uint64(off), uint64(off)
		off += len(s.data)
		secs = append(secs, s)
		return s
	}
	var interp *section
	if exe {
		interp = place(&section{name: ".interp", typ: elf.SHT_PROGBITS, flags: elf.SHF_ALLOC, data: append([]byte(w.o.Interp), 0), align: 1})
	}
	var noteSecs []*section
	for _, n := range notes {
		noteSecs = append(noteSecs, place(&section{name: n.Section, typ: elf.SHT_NOTE, flags: elf.SHF_ALLOC, data: w.note(n.Owner, n.Type, n.Desc), align: 4}))
	}

	var dynstr strtab
	var dyns [][2]uint64
	for _, n := range w.o.Needed {
		dyns = append(dyns, [2]uint64{uint64(elf.DT_NEEDED), uint64(dynstr.add(n))})
	}
	if w.o.Soname != "" {
		dyns = append(dyns, [2]uint64{uint64(elf.DT_SONAME), uint64(dynstr.add(w.o.Soname))})
	}

	hash := place(&section{name: ".hash", typ: elf.SHT_HASH, flags: elf.SHF_ALLOC, data: w.words(1, 1, 0, 0), align: 4, entsize: 4})
	dynsym := place(&section{name: ".dynsym", typ: elf.SHT_DYNSYM, flags: elf.SHF_ALLOC, data: make([]byte, symSize), align: uint64(w.wordSize()), entsize: uint64(symSize), info: 1})
	strs := place(&section{name: ".dynstr", typ: elf.SHT_STRTAB, flags: elf.SHF_ALLOC, data: dynstr.bytes(), align: 1})
	var text *section
	if exe {
		text = place(&section{name: ".text", typ: elf.SHT_PROGBITS, flags: elf.SHF_ALLOC | elf.SHF_EXECINSTR, data: exitCode, align: 16})
	}
	end1 := off

	dyns = append(dyns,
		[2]uint64{uint64(elf.DT_HASH), hash.addr},
		[2]uint64{uint64(elf.DT_STRTAB), strs.addr},
		[2]uint64{uint64(elf.DT_SYMTAB), dynsym.addr},
		[2]uint64{uint64(elf.DT_STRSZ), uint64(len(strs.data))},
		[2]uint64{uint64(elf.DT_SYMENT), uint64(symSize)},
		[2]uint64{uint64(elf.DT_NULL), 0})
	dynamic := place(&section{name: ".dynamic", typ: elf.SHT_DYNAMIC, flags: elf.SHF_ALLOC | elf.SHF_WRITE, data: w.dynamic(dyns), align: uint64(w.wordSize()), entsize: uint64(dynSize)})
	dynamic.addr += page
	off += w.o.Pad

	var shstr strtab
	shstr.add("")
	for _, s := range secs {
		s.nameOff = shstr.add(s.name)
	}
	shstrSec := &section{name: ".shstrtab", typ: elf.SHT_STRTAB, align: 1}
	shstrSec.nameOff = shstr.add(".shstrtab")
	shstrSec.data = shstr.bytes()
	place(shstrSec)
	shstrSec.addr = 0
	shoff := align(off, 8)

	// Section indices: 0 is the null section.
	index := func(s *section) uint32 {
		for i, x := range secs {
			if x == s {
				return uint32(i + 1)
			}
		}
		return 0
	}
	hash.link, dynsym.link, dynamic.link = index(dynsym), index(strs), index(strs)

	var progs []prog
	if exe {
		progs = append(progs,
			prog{typ: elf.PT_PHDR, flags: elf.PF_R, off: uint64(ehdrSize), addr: uint64(ehdrSize), size: uint64(nprog * phdrSize), align: 8},
			prog{typ: elf.PT_INTERP, flags: elf.PF_R, off: interp.off, addr: interp.addr, size: uint64(len(interp.data)), align: 1})
	}
	loadFlags := elf.PF_R
	if exe {
		loadFlags |= elf.PF_X
	}
	progs = append(progs,
		prog{typ: elf.PT_LOAD, flags: loadFlags, size: uint64(end1), align: page},
		prog{typ: elf.PT_LOAD, flags: elf.PF_R | elf.PF_W, off: dynamic.off, addr: dynamic.addr, size: uint64(len(dynamic.data)), align: page},
		prog{typ: elf.PT_DYNAMIC, flags: elf.PF_R | elf.PF_W, off: dynamic.off, addr: dynamic.addr, size: uint64(len(dynamic.data)), align: uint64(w.wordSize())})
	for _, s := range noteSecs {
		progs = append(progs, prog{typ: elf.PT_NOTE, flags: elf.PF_R, off: s.off, addr: s.addr, size: uint64(len(s.data)), align: 4})
	}
	progs = append(progs, prog{typ: elf.PT_GNU_STACK, flags: elf.PF_R | elf.PF_W, align: 16})

	var entry uint64
	if text != nil {
		entry = text.addr
	}
	buf := make([]byte, shoff, shoff+(len(secs)+1)*shdrSize)
	w.header(buf, entry, uint64(shoff), len(progs), len(secs)+1, len(secs))
	for i, p := range progs {
		w.progHeader(buf[ehdrSize+i*phdrSize:], p)
	}
	for _, s := range secs {
		copy(buf[s.off:], s.data)
	}
	out := bytes.NewBuffer(buf)
	out.Write(make([]byte, shdrSize)) // null section
	for _, s := range secs {
		w.sectionHeader(out, s)
	}
	return out.Bytes()
}

func (w *writer) wordSize() int {
	if w.is64() {
		return 8
	}
	return 4
}

func (w *writer) words(vs ...uint32) []byte {
	b := make([]byte, 4*len(vs))
	for i, v := range vs {
		w.order.PutUint32(b[4*i:], v)
	}
	return b
}

func (w *writer) dynamic(dyns [][2]uint64) []byte {
	var b bytes.Buffer
	for _, d := range dyns {
		w.word(&b, d[0])
		w.word(&b, d[1])
	}
	return b.Bytes()
}

// word writes an address-sized value.
func (w *writer) word(b *bytes.Buffer, v uint64) {
	if w.is64() {
		_ = binary.Write(b, w.order, v)
	} else {
		_ = binary.Write(b, w.order, uint32(v))
	}
}

func (w *writer) header(buf []byte, entry, shoff uint64, phnum, shnum, shstrndx int) {
	ehdrSize, phdrSize, shdrSize, _, _ := w.sizes()
	data := elf.ELFDATA2LSB
	if w.order == binary.BigEndian {
		data = elf.ELFDATA2MSB
	}
	copy(buf, elf.ELFMAG)
	buf[elf.EI_CLASS], buf[elf.EI_DATA], buf[elf.EI_VERSION], buf[elf.EI_OSABI] = byte(w.class), byte(data), byte(elf.EV_CURRENT), byte(w.o.OSABI)
	var b bytes.Buffer
	_ = binary.Write(&b, w.order, uint16(elf.ET_DYN))
	_ = binary.Write(&b, w.order, uint16(w.machine))
	_ = binary.Write(&b, w.order, uint32(elf.EV_CURRENT))
	w.word(&b, entry)
	w.word(&b, uint64(ehdrSize)) // phoff
	w.word(&b, shoff)
	for _, v := range []uint32{w.o.Flags} {
		_ = binary.Write(&b, w.order, v)
	}
	for _, v := range []int{ehdrSize, phdrSize, phnum, shdrSize, shnum, shstrndx} {
		_ = binary.Write(&b, w.order, uint16(v))
	}
	copy(buf[elf.EI_NIDENT:], b.Bytes())
}

func (w *writer) progHeader(buf []byte, p prog) {
	var b bytes.Buffer
	u32 := func(v uint32) { _ = binary.Write(&b, w.order, v) }
	if w.is64() {
		u32(uint32(p.typ))
		u32(uint32(p.flags))
		for _, v := range []uint64{p.off, p.addr, p.addr, p.size, p.size, p.align} {
			w.word(&b, v)
		}
	} else {
		u32(uint32(p.typ))
		for _, v := range []uint64{p.off, p.addr, p.addr, p.size, p.size} {
			w.word(&b, v)
		}
		u32(uint32(p.flags))
		u32(uint32(p.align))
	}
	copy(buf, b.Bytes())
}

func (w *writer) sectionHeader(b *bytes.Buffer, s *section) {
	u32 := func(v uint32) { _ = binary.Write(b, w.order, v) }
	u32(s.nameOff)
	u32(uint32(s.typ))
	w.word(b, uint64(s.flags))
	w.word(b, s.addr)
	w.word(b, s.off)
	w.word(b, uint64(len(s.data)))
	u32(s.link)
	u32(s.info)
	w.word(b, s.align)
	w.word(b, s.entsize)
}
