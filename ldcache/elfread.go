package ldcache

import (
	"bytes"
	"io"
	"strings"
)

// libInfo is what ldconfig learns from one file (readlib.c process_file).
type libInfo struct {
	flag     int32
	soname   string
	hasSName bool
	isaLevel uint32
}

// fileReader serves reads from the first bytes of a file, read once, and
// falls back to ReadAt. Bytes past the end of the file read as zero, as in
// ldconfig's mapping of the file. The file's size is only asked for (one
// fstat) when a read goes past those first bytes.
//
// Past the head it keeps a few windows of the file, replaced in turn, so
// that walking a dynamic section while looking up its strings elsewhere
// costs one read per region, not one per entry.
type fileReader struct {
	r     io.ReaderAt
	head  []byte
	size  uint64
	sized bool
	stat  func() (uint64, bool) // the file's size
	wins  [numWindows]fileWin
	next  int // the window to replace next
}

// fileWin is a window of the file: b holds the bytes at off.
type fileWin struct {
	off uint64
	b   []byte
}

// numWindows is how many windows past the head a fileReader keeps.
const numWindows = 4

// newFileReader reads the head of r into the first headSize bytes of buf;
// the rest of buf is scratch for later windows.
func newFileReader(r io.ReaderAt, buf []byte, stat func() (uint64, bool)) *fileReader {
	head := buf[:min(len(buf), headSize)]
	n, _ := r.ReadAt(head, 0)
	f := &fileReader{r: r, head: head[:n], stat: stat}
	rest := buf[len(head):]
	for i := range f.wins {
		if len(rest) >= windowSize {
			f.wins[i].b, rest = rest[:0:windowSize], rest[windowSize:]
		}
	}
	if n < len(head) {
		f.size, f.sized = uint64(n), true
	}
	return f
}

// inFile reports whether off is at most the file's size (a pointer glibc
// accepts; reading there yields zeros).
func (f *fileReader) inFile(off uint64) bool {
	if off <= uint64(len(f.head)) {
		return true
	}
	size, ok := f.fileSize()
	return ok && off <= size
}

func (f *fileReader) fileSize() (uint64, bool) {
	if !f.sized {
		s, ok := f.stat()
		if !ok {
			return 0, false
		}
		f.size, f.sized = s, true
	}
	return f.size, true
}

// at returns n bytes at off; ok is false past the end of the file. The
// bytes are valid until the window holding them is replaced
// (numWindows-1 later reads past the head at the soonest). Reads past the
// head fill a window of at least windowSize bytes.
func (f *fileReader) at(off, n uint64) ([]byte, bool) {
	if n > 1<<20 {
		return nil, false
	}
	if off+n <= uint64(len(f.head)) {
		return f.head[off : off+n], true
	}
	for i := range f.wins {
		w := &f.wins[i]
		if off >= w.off && off+n <= w.off+uint64(len(w.b)) {
			return w.b[off-w.off : off-w.off+n], true
		}
	}
	size, ok := f.fileSize()
	if !ok || off > size {
		return nil, false
	}
	w, ok := f.fill(off, max(n, windowSize), size)
	if !ok {
		return nil, false
	}
	return w[:n], true
}

// headSize is how much of each file is read first: the ELF and program
// headers, and often everything ldconfig needs.
const headSize = 4096

// windowSize is the least read past the head.
const windowSize = 4096

// scratchSize is the buffer a file is read with: head and windows.
const scratchSize = headSize + numWindows*windowSize

// fill reads want bytes at off into the next window, zero past the end.
func (f *fileReader) fill(off, want, size uint64) ([]byte, bool) {
	w := &f.wins[f.next]
	f.next = (f.next + 1) % numWindows
	if uint64(cap(w.b)) < want {
		w.b = make([]byte, want)
	}
	w.b, w.off = w.b[:want], off
	clear(w.b)
	if have := min(want, size-off); have > 0 {
		got, err := f.r.ReadAt(w.b[:have], int64(off))
		if err != nil && err != io.EOF || uint64(got) < have {
			w.b = w.b[:0]
			return nil, false
		}
	}
	return w.b, true
}

// cstring reads the NUL-terminated string at off (ending at the end of
// the file at the latest).
func (f *fileReader) cstring(off uint64) (string, bool) {
	if i := uint64(len(f.head)); off < i {
		if j := bytes.IndexByte(f.head[off:], 0); j >= 0 {
			return string(f.head[off : off+uint64(j)]), true
		}
	}
	size, ok := f.fileSize()
	if !ok || off > size {
		return "", false
	}
	var sb strings.Builder
	for chunk := uint64(64); off < size; chunk = min(chunk*2, 4096) {
		b, ok := f.at(off, min(chunk, size-off))
		if !ok {
			return "", false
		}
		if i := bytes.IndexByte(b, 0); i >= 0 {
			sb.Write(b[:i])
			return sb.String(), true
		}
		sb.Write(b)
		off += uint64(len(b))
		if sb.Len() > 1<<16 {
			return "", false
		}
	}
	return sb.String(), true
}

const (
	etDyn          = 3
	ptLoad         = 1
	ptDynamic      = 2
	ptInterp       = 3
	ptGNUProperty  = 0x6474e553
	dtNull         = 0
	dtNeeded       = 1
	dtStrtab       = 5
	dtSoname       = 14
	x86ISANeeded   = 0xc0008002
	ntGNUProperty0 = 5
)

// readLib classifies the file in f as the target's ldconfig does; ok is
// false when ldconfig would leave it out of the cache.
func (t *target) readLib(f *fileReader, lib string) (libInfo, bool) {
	minSize := uint64(52)
	if t.is64 {
		minSize = 64 // sizeof (ElfW(Ehdr)) exceeds sizeof (struct exec)
	}
	hdr, ok := f.at(0, minSize)
	if !ok || !f.inFile(minSize) {
		return libInfo{}, false
	}
	if t.isAout(hdr) {
		return libInfo{flag: 0, soname: aoutSoname(lib), hasSName: true}, true
	}
	if string(hdr[:4]) != "\x7fELF" || t.order.Uint16(hdr[16:]) != etDyn {
		return libInfo{}, false
	}
	class, machine := hdr[4], t.order.Uint16(hdr[18:])
	if !t.accepts(class, machine) {
		return libInfo{}, false
	}
	e := elfFile{t: t, f: f, is64: class == 2}
	info, ok := e.read()
	if !ok {
		return libInfo{}, false
	}
	info.flag, ok = t.classify(class, machine, e.eflags, info.flag)
	return info, ok
}

// isAout reports a ZMAGIC or QMAGIC a.out header (libc4 libraries).
func (t *target) isAout(hdr []byte) bool {
	var info uint64
	if t.is64 {
		info = t.order.Uint64(hdr)
	} else {
		info = uint64(t.order.Uint32(hdr))
	}
	m := info & 0xffff
	return m == 0o413 || m == 0o314
}

// aoutSoname is the name up to the major version: "libc.so.4.7" → "libc.so.4".
func aoutSoname(lib string) string {
	i := strings.Index(lib, ".so.")
	if i < 0 {
		return lib
	}
	if j := strings.Index(lib[i+4:], "."); j >= 0 {
		return lib[:i+4+j]
	}
	return lib
}
