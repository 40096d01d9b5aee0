package ldcache

// extensions reads the extension directory of the new-format header at
// base (glibc 2.33+): the generator string and the glibc-hwcaps names. Like
// glibc's cache_extension_load, all offsets are from the start of the file,
// unknown tags are skipped and a malformed hwcaps section is ignored.
func (p *parser) extensions(base uint64) (string, []string, error) {
	off := uint64(p.u32(base + 32))
	if off == 0 {
		return "", nil, nil
	}
	count, err := p.extDir(base+32, off)
	if err != nil {
		return "", nil, err
	}
	gen, hw, err := p.sections(off, count)
	if err != nil || hw[1] == 0 || hw[0]%4 != 0 || hw[1]%4 != 0 {
		return gen, nil, err // no (usable) hwcaps section
	}
	dirs, err := p.hwcapsDirs(hw[0], hw[1])
	return gen, dirs, err
}

// extDir checks the extension directory at off, named by the header
// field at at, and returns its section count.
func (p *parser) extDir(at, off uint64) (uint64, error) {
	switch {
	case off%4 != 0:
		return 0, corrupt(at, "extension offset %#x is not a multiple of 4", off)
	case off+extHeaderSize > p.size():
		return 0, corrupt(at, "extension offset %#x past end of file (size %#x)", off, p.size())
	case p.u32(off) != extensionMagic:
		return 0, corrupt(off, "extension magic %#x, want %#x", p.u32(off), uint32(extensionMagic))
	}
	count := uint64(p.u32(off + 4))
	if count > (p.size()-off-extHeaderSize)/extSectionSize {
		return 0, corrupt(off+4, "%d extension sections do not fit in the file (size %#x)", count, p.size())
	}
	return count, nil
}

// sections returns the generator string and the offset and size of the
// (last) glibc-hwcaps section.
func (p *parser) sections(off, count uint64) (string, [2]uint64, error) {
	var gen string
	var hw [2]uint64
	for i := range count {
		s := off + extHeaderSize + i*extSectionSize
		tag, so, sz := p.u32(s), uint64(p.u32(s+8)), uint64(p.u32(s+12))
		if so+sz > p.size() {
			return "", hw, corrupt(s+8, "extension section %d (%#x bytes at %#x) past end of file (size %#x)", i, sz, so, p.size())
		}
		switch tag {
		case tagGenerator:
			gen = p.s[so : so+sz]
		case tagGlibcHWCaps:
			hw = [2]uint64{so, sz}
		}
	}
	return gen, hw, nil
}

// hwcapsDirs reads the glibc-hwcaps section: string offsets from the start
// of the file.
func (p *parser) hwcapsDirs(off, size uint64) ([]string, error) {
	dirs := make([]string, size/4)
	for i := range dirs {
		at := off + uint64(i)*4
		s, err := p.str(0, p.u32(at), "glibc-hwcaps name %d", i, at)
		if err != nil {
			return nil, err
		}
		dirs[i] = s
	}
	return dirs, nil
}
