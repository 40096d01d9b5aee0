package ldcache

import "math/bits"

// elfFile is glibc's elf/readelflib.c process_elf_file for one class: it
// walks the program headers and the dynamic section of a mapped file,
// with the same tolerance (pointers may reach the end of the file, bytes
// past it read as zero) and the same early exits.
type elfFile struct {
	t      *target
	f      *fileReader
	is64   bool
	eflags uint32
	phoff  uint64
	phnum  uint64
}

type phdr struct {
	typ, offset, vaddr, filesz, align uint64
}

func (e *elfFile) word(b []byte) uint64 {
	if e.is64 {
		return e.t.order.Uint64(b)
	}
	return uint64(e.t.order.Uint32(b))
}

func (e *elfFile) phdrSize() uint64 {
	if e.is64 {
		return 56
	}
	return 32
}

func (e *elfFile) phdrAt(i uint64) (phdr, bool) {
	b, ok := e.f.at(e.phoff+i*e.phdrSize(), e.phdrSize())
	if !ok {
		return phdr{}, false
	}
	o := e.t.order
	if e.is64 {
		return phdr{typ: uint64(o.Uint32(b)), offset: o.Uint64(b[8:]), vaddr: o.Uint64(b[16:]), filesz: o.Uint64(b[32:]), align: o.Uint64(b[48:])}, true
	}
	return phdr{typ: uint64(o.Uint32(b)), offset: uint64(o.Uint32(b[4:])), vaddr: uint64(o.Uint32(b[8:])), filesz: uint64(o.Uint32(b[16:])), align: uint64(o.Uint32(b[28:]))}, true
}

func (e *elfFile) header() bool {
	size := uint64(52)
	if e.is64 {
		size = 64
	}
	h, ok := e.f.at(0, size)
	if !ok {
		return false
	}
	if e.is64 {
		e.phoff, e.phnum, e.eflags = e.t.order.Uint64(h[32:]), uint64(e.t.order.Uint16(h[56:])), e.t.order.Uint32(h[48:])
	} else {
		e.phoff, e.phnum, e.eflags = uint64(e.t.order.Uint32(h[28:])), uint64(e.t.order.Uint16(h[44:])), e.t.order.Uint32(h[36:])
	}
	return e.f.inFile(e.phoff)
}

// read returns the flag (ELF or libc6), SONAME and ISA level.
func (e *elfFile) read() (libInfo, bool) {
	if !e.header() {
		return libInfo{}, false
	}
	info := libInfo{flag: flagELF}
	dynOff, dynSize, ok := e.segments(&info)
	if !ok || dynSize == 0 || !e.f.inFile(dynOff) {
		return libInfo{}, false
	}
	return e.dynamic(dynOff, info)
}

// segments walks the program headers: the last PT_DYNAMIC, PT_INTERP
// (which may mark libc6) and PT_GNU_PROPERTY (the x86 ISA level).
func (e *elfFile) segments(info *libInfo) (dynOff, dynSize uint64, ok bool) {
	for i := range e.phnum {
		p, ok := e.phdrAt(i)
		if !ok {
			return 0, 0, false
		}
		switch p.typ {
		case ptDynamic:
			dynOff, dynSize = p.offset, p.filesz
		case ptInterp:
			if !e.interp(p, info) {
				return 0, 0, false
			}
		case ptGNUProperty:
			if e.t.x86ISA {
				e.isaLevel(p, info)
			}
		}
	}
	return dynOff, dynSize, true
}

func (e *elfFile) interp(p phdr, info *libInfo) bool {
	if !e.f.inFile(p.offset) {
		return false
	}
	s, ok := e.f.cstring(p.offset)
	if !ok {
		return false
	}
	for _, known := range e.t.interps {
		if s == known {
			info.flag = flagLibc6
			break
		}
	}
	return true
}

func (e *elfFile) dynSize() uint64 {
	if e.is64 {
		return 16
	}
	return 8
}

// dyn returns the tag and value of the dynamic entry at off.
func (e *elfFile) dyn(off uint64) (int64, uint64, bool) {
	b, ok := e.f.at(off, e.dynSize())
	if !ok {
		return 0, 0, false
	}
	if e.is64 {
		return int64(e.t.order.Uint64(b)), e.t.order.Uint64(b[8:]), true
	}
	return int64(int32(e.t.order.Uint32(b))), uint64(e.t.order.Uint32(b[4:])), true
}

func (e *elfFile) dynamic(off uint64, info libInfo) (libInfo, bool) {
	strs, ok := e.strtab(off)
	if !ok {
		return libInfo{}, false
	}
	for at := off; ; at += e.dynSize() {
		tag, val, ok := e.dyn(at)
		if !ok {
			return libInfo{}, false
		}
		if tag == dtNull {
			return info, true
		}
		if tag == dtNeeded || tag == dtSoname {
			if !e.nameEntry(tag, strs+val, &info) {
				return libInfo{}, false
			}
			if info.hasSName && info.flag != flagELF {
				return info, true
			}
		}
	}
}

// nameEntry applies a DT_NEEDED (libc.so.6 or libm.so.6 mark libc6) or
// DT_SONAME entry whose string is at off.
func (e *elfFile) nameEntry(tag int64, off uint64, info *libInfo) bool {
	name, ok := e.stringAt(off)
	if !ok {
		return false
	}
	if tag == dtNeeded && info.flag == flagELF && (name == "libc.so.6" || name == "libm.so.6") {
		info.flag = flagLibc6
	} else if tag == dtSoname {
		info.soname, info.hasSName = name, true
	}
	return true
}

func (e *elfFile) stringAt(off uint64) (string, bool) {
	if !e.f.inFile(off) {
		return "", false
	}
	return e.f.cstring(off)
}

// strtab finds the file offset of DT_STRTAB through the PT_LOAD that maps
// it (offset 0 when none does, as glibc's "very strange" case).
func (e *elfFile) strtab(off uint64) (uint64, bool) {
	for at := off; ; at += e.dynSize() {
		tag, val, ok := e.dyn(at)
		if !ok || tag == dtNull {
			return 0, false
		}
		if tag != dtStrtab {
			continue
		}
		var loadoff uint64
		for i := range e.phnum {
			p, ok := e.phdrAt(i)
			if ok && p.typ == ptLoad && val >= p.vaddr && val-p.vaddr < p.filesz {
				loadoff = p.vaddr - p.offset
				break
			}
		}
		s := val - loadoff
		return s, e.f.inFile(s)
	}
}

// isaLevel reads GNU_PROPERTY_X86_ISA_1_NEEDED from a PT_GNU_PROPERTY
// segment: the highest ISA level bit the object needs.
func (e *elfFile) isaLevel(p phdr, info *libInfo) {
	if p.align != e.dynSize()/2 || !e.f.inFile(p.offset) {
		return
	}
	for off := uint64(0); off+12 < p.filesz; {
		h, ok := e.f.at(p.offset+off, 16)
		if !ok {
			return
		}
		namesz, descsz, typ := uint64(e.t.order.Uint32(h)), uint64(e.t.order.Uint32(h[4:])), e.t.order.Uint32(h[8:])
		if namesz == 4 && typ == ntGNUProperty0 && string(h[12:16]) == "GNU\x00" {
			e.properties(p.offset+off+16, descsz, info)
			return
		}
		off += alignUp(12+namesz, p.align) + alignUp(descsz, p.align)
	}
}

func alignUp(n, a uint64) uint64 { return (n + a - 1) &^ (a - 1) }

func (e *elfFile) properties(off, descsz uint64, info *libInfo) {
	if descsz < 8 || descsz%(e.dynSize()/2) != 0 {
		return
	}
	var last uint32
	for ptr, end := off, off+descsz; end-ptr >= 8; {
		h, ok := e.f.at(ptr, 8)
		if !ok {
			return
		}
		typ, datasz := e.t.order.Uint32(h), uint64(e.t.order.Uint32(h[4:]))
		if typ < last || ptr+8+datasz > end || typ > x86ISANeeded {
			return
		}
		last = typ
		if typ == x86ISANeeded {
			if d, ok := e.f.at(ptr+8, 4); ok && datasz == 4 {
				if v := e.t.order.Uint32(d); v != 0 {
					info.isaLevel = uint32(31 - bits.LeadingZeros32(v))
				}
			}
			return
		}
		ptr += 8 + alignUp(datasz, e.dynSize()/2)
	}
}
