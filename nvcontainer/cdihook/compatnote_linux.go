package cdihook

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"encoding/json"
	"io"
	"os"

	"github.com/go-nvc/nvc/internal/inroot"
)

const (
	compatNoteSection = ".note.cuda.fwd_compatibility"
	compatNoteOwner   = "NVIDIA Corporation"
	maxCompatNote     = 64 << 10 // bytes of the note section read
)

// readCompatNote reads the .note.cuda.fwd_compatibility note of name in
// the directory dir: name is not followed and is opened for reading only
// if fstat of its O_PATH descriptor shows a regular file
// (inroot.OpenRegularAt). A file that is not ELF, has no such note, or
// whose note is not NVIDIA's JSON has no note (nil), as for the toolkit.
func readCompatNote(dir *os.File, name string) *CompatNote {
	fd, st, err := inroot.OpenRegularAt(int(dir.Fd()), name)
	if err != nil {
		return nil
	}
	f := os.NewFile(uintptr(fd), name)
	defer f.Close()
	ef, err := elf.NewFile(io.NewSectionReader(f, 0, st.Size))
	if err != nil {
		return nil
	}
	s := ef.Section(compatNoteSection)
	if s == nil || s.Type != elf.SHT_NOTE || s.Size > maxCompatNote {
		return nil
	}
	data, err := s.Data()
	if err != nil {
		return nil
	}
	return parseCompatNote(data, ef.ByteOrder, s.Addralign)
}

// parseCompatNote parses one ELF note (namesz, descsz, type, name, desc;
// name padded to align, at least 4) owned by NVIDIA with a JSON desc.
func parseCompatNote(data []byte, order binary.ByteOrder, align uint64) *CompatNote {
	if len(data) < 12 {
		return nil
	}
	align = max(align, 4)
	namesz, descsz := uint64(order.Uint32(data)), uint64(order.Uint32(data[4:]))
	descAt := 12 + (namesz+align-1)&^(align-1)
	if 12+namesz > uint64(len(data)) || descAt+descsz > uint64(len(data)) {
		return nil
	}
	if string(bytes.TrimRight(data[12:12+namesz], "\x00")) != compatNoteOwner {
		return nil
	}
	var n CompatNote
	if json.Unmarshal(bytes.Trim(data[descAt:descAt+descsz], "\x00"), &n) != nil {
		return nil
	}
	return &n
}
