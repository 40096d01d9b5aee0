// Package elfwriter writes small but real ELF files: shared objects with a
// SONAME, DT_NEEDED entries and notes, and tiny executables that only exit.
//
// Tests and the fake host generator use it so that driver libraries are real
// ELF objects — readable by debug/elf, by glibc's ldconfig and readelf, and
// loadable by glibc's dynamic loader — without a compiler. The objects define
// no symbols and hold no code, except an executable's few instructions that
// call exit(0).
package elfwriter

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// ABITag is the content of an NT_GNU_ABI_TAG note: the minimum kernel ABI a
// library needs (libnvidia-tls carries 2.3.99 to mark the new TLS ABI).
type ABITag struct {
	OS                  uint32 // 0: Linux
	Major, Minor, Patch uint32
}

// Note is an extra SHT_NOTE section, also covered by its own PT_NOTE.
type Note struct {
	Section string // e.g. ".note.cuda.fwd_compatibility"
	Owner   string // the note's name, e.g. "NVIDIA Corporation"
	Type    uint32
	Desc    []byte
}

// Object describes the file to write. The zero value is an x86-64 shared
// object with no SONAME.
type Object struct {
	Class   elf.Class   // zero: ELFCLASS64
	Machine elf.Machine // zero: EM_X86_64
	Data    elf.Data    // zero: little-endian
	OSABI   elf.OSABI   // zero: ELFOSABI_NONE (System V)
	Flags   uint32      // e_flags, e.g. EF_ARM_ABI_FLOAT_HARD (0x400)
	Soname  string      // empty: no DT_SONAME
	Needed  []string    // DT_NEEDED entries, in order
	ABITag  *ABITag     // nil: no NT_GNU_ABI_TAG note
	Notes   []Note      // extra notes
	// Interp makes an executable with this PT_INTERP whose entry point calls
	// exit(0) (x86-64 only). Empty: a shared object.
	Interp string
	// Pad appends this many zero bytes after the contents, to give a file a
	// realistic size. Zero: none.
	Pad int
}

// ErrUnsupported is returned for objects this package cannot write.
var ErrUnsupported = errors.New("unsupported ELF object")

// Library returns an x86-64 shared object with the given SONAME and needs.
func Library(soname string, needed ...string) *Object {
	return &Object{Soname: soname, Needed: needed}
}

// WriteFile writes o to path with the given permissions, replacing nothing:
// the file must not exist.
func WriteFile(path string, o *Object, perm fs.FileMode) error {
	b, err := o.Bytes()
	if err != nil {
		return fmt.Errorf("writing ELF file %s: %w", path, err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return err
	}
	_, err = f.Write(b)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(path, perm)
	}
	return err
}

// exitCode is x86-64 `mov edi, 0; mov eax, 231 (exit_group); syscall`.
var exitCode = []byte{0xbf, 0, 0, 0, 0, 0xb8, 0xe7, 0, 0, 0, 0x0f, 0x05}

// Bytes returns the file's contents.
func (o *Object) Bytes() ([]byte, error) {
	w, err := newWriter(o)
	if err != nil {
		return nil, err
	}
	return w.build(), nil
}

func newWriter(o *Object) (*writer, error) {
	w := &writer{o: o, class: o.Class, machine: o.Machine, order: binary.ByteOrder(binary.LittleEndian)}
	if w.class == elf.ELFCLASSNONE {
		w.class = elf.ELFCLASS64
	}
	if w.machine == elf.EM_NONE {
		w.machine = elf.EM_X86_64
	}
	switch o.Data {
	case elf.ELFDATANONE, elf.ELFDATA2LSB:
	case elf.ELFDATA2MSB:
		w.order = binary.BigEndian
	default:
		return nil, fmt.Errorf("%w: data encoding %v", ErrUnsupported, o.Data)
	}
	if w.class != elf.ELFCLASS32 && w.class != elf.ELFCLASS64 {
		return nil, fmt.Errorf("%w: class %v", ErrUnsupported, o.Class)
	}
	if o.Interp != "" && (w.class != elf.ELFCLASS64 || w.machine != elf.EM_X86_64) {
		return nil, fmt.Errorf("%w: executables are x86-64 only", ErrUnsupported)
	}
	return w, nil
}

type writer struct {
	o       *Object
	class   elf.Class
	machine elf.Machine
	order   binary.ByteOrder
}

func (w *writer) is64() bool { return w.class == elf.ELFCLASS64 }

// strtab builds a string table; offset 0 is the empty string.
type strtab struct{ b bytes.Buffer }

func (s *strtab) add(str string) uint32 {
	if s.b.Len() == 0 {
		s.b.WriteByte(0)
	}
	off := uint32(s.b.Len())
	s.b.WriteString(str)
	s.b.WriteByte(0)
	return off
}

func (s *strtab) bytes() []byte {
	if s.b.Len() == 0 {
		s.b.WriteByte(0)
	}
	return s.b.Bytes()
}

func align(n, a int) int { return (n + a - 1) &^ (a - 1) }

func (w *writer) note(owner string, typ uint32, desc []byte) []byte {
	var b bytes.Buffer
	u32 := func(v uint32) { _ = binary.Write(&b, w.order, v) }
	u32(uint32(len(owner) + 1))
	u32(uint32(len(desc)))
	u32(typ)
	b.WriteString(owner)
	b.WriteByte(0)
	for b.Len()%4 != 0 {
		b.WriteByte(0)
	}
	b.Write(desc)
	for b.Len()%4 != 0 {
		b.WriteByte(0)
	}
	return b.Bytes()
}

func (w *writer) notes() []Note {
	var ns []Note
	if t := w.o.ABITag; t != nil {
		var d bytes.Buffer
		for _, v := range []uint32{t.OS, t.Major, t.Minor, t.Patch} {
			_ = binary.Write(&d, w.order, v)
		}
		ns = append(ns, Note{Section: ".note.ABI-tag", Owner: "GNU", Type: 1, Desc: d.Bytes()})
	}
	return append(ns, w.o.Notes...)
}
