package driver

import (
	"bytes"
	"debug/elf"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-nvc/nvc/internal/elfwriter"
)

func elfObjects() map[string]*elfwriter.Object {
	tls := elfwriter.Library("libnvidia-tls.so.550.54.15", "libc.so.6")
	tls.ABITag = &elfwriter.ABITag{Major: 2, Minor: 3, Patch: 99}
	return map[string]*elfwriter.Object{
		"x86-64":  elfwriter.Library("libcuda.so.1", "libm.so.6", "libc.so.6"),
		"i386":    {Class: elf.ELFCLASS32, Machine: elf.EM_386, Soname: "libGL.so.1", Needed: []string{"libnvidia-glcore.so.550.54.15", "libc.so.6"}},
		"s390x":   {Machine: elf.EM_S390, Data: elf.ELFDATA2MSB, Soname: "libbig.so.1", Needed: []string{"libc.so.6"}},
		"ppc64le": {Machine: elf.EM_PPC64, Soname: "libp.so.2"},
		"tls":     tls,
		"nosonme": elfwriter.Library("", "libc.so.6"),
		"noteonly": {Soname: "libn.so", Notes: []elfwriter.Note{{Section: ".note.x", Owner: "NVIDIA", Type: 1, Desc: []byte{1, 2, 3, 4}}},
			ABITag: &elfwriter.ABITag{Major: 3, Minor: 2, Patch: 0}},
	}
}

// TestReadELF compares readELF, which reads program headers only, with
// debug/elf, which reads section headers.
func TestReadELF(t *testing.T) {
	for name, o := range elfObjects() {
		b, err := o.Bytes()
		require.NoError(t, err)
		info, err := readELF(bytes.NewReader(b), int64(len(b)))
		if !assert.NoError(t, err, name) {
			continue
		}
		f, err := elf.NewFile(bytes.NewReader(b))
		require.NoError(t, err)
		soname, _ := f.DynString(elf.DT_SONAME)
		needed, _ := f.DynString(elf.DT_NEEDED)
		assert.Equal(t, f.Class, info.class, "%s: class, readELF against debug/elf", name)
		if len(soname) > 0 {
			assert.Equal(t, soname[0], info.soname, "%s: soname, readELF against debug/elf", name)
		} else {
			assert.Empty(t, info.soname, "%s: soname, debug/elf finds none", name)
		}
		assert.True(t, slices.Equal(needed, info.needed), "%s: needed %q, debug/elf %q", name, info.needed, needed)
		var abi [3]uint32
		if o.ABITag != nil {
			abi = [3]uint32{o.ABITag.Major, o.ABITag.Minor, o.ABITag.Patch}
		}
		assert.Equal(t, abi, info.abi, "%s: ABI tag", name)
	}
}

func TestReadELFRejects(t *testing.T) {
	lib, err := elfwriter.Library("libx.so.1").Bytes()
	require.NoError(t, err)
	exec := slices.Clone(lib)
	exec[16] = byte(elf.ET_EXEC)
	for name, b := range map[string][]byte{
		"empty":      nil,
		"text":       []byte("GNU ld script\nGROUP ( libc.so.6 )\n"),
		"executable": exec,
		"truncated":  lib[:100],
		"bad class":  append([]byte{0x7f, 'E', 'L', 'F', 9}, lib[5:]...),
	} {
		t.Run(name, func(t *testing.T) {
			info, err := readELF(bytes.NewReader(b), int64(len(b)))
			assert.Error(t, err, "%s: read %+v", name, info)
		})
	}
}

// FuzzReadELF: readELF never panics, and what it reads from a file it
// accepts, debug/elf agrees is a shared object of that class.
func FuzzReadELF(f *testing.F) {
	for _, o := range elfObjects() {
		b, err := o.Bytes()
		require.NoError(f, err)
		f.Add(b)
	}
	f.Add([]byte("\x7fELF"))
	f.Fuzz(func(t *testing.T, b []byte) {
		info, err := readELF(bytes.NewReader(b), int64(len(b)))
		if err != nil {
			return
		}
		assert.Contains(t, []elf.Class{elf.ELFCLASS32, elf.ELFCLASS64}, info.class, "accepted class")
		assert.LessOrEqual(t, len(info.needed), len(b), "needed names from %d bytes", len(b))
	})
}
