package ldcache

import (
	"bytes"
	"debug/elf"
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/go-nvc/nvc/internal/elfwriter"
)

// FuzzReadLib feeds arbitrary bytes to the ELF reader Build runs on every
// file of a (possibly hostile) root: it must never panic, a file it
// accepts must be an ELF shared object (or an a.out library), and reading
// through the head and windows must give what reading the whole file at
// once gives.
func FuzzReadLib(f *testing.F) {
	for _, o := range []*elfwriter.Object{
		{Soname: "libx.so.1", Needed: []string{"libc.so.6"}},
		{Class: elf.ELFCLASS32, Machine: elf.EM_386, Soname: "liby.so.2"},
		{Class: elf.ELFCLASS32, Soname: "libx32.so.1", ABITag: &elfwriter.ABITag{Major: 2, Minor: 6}},
		{Machine: elf.EM_AARCH64},
	} {
		b, err := o.Bytes()
		require.NoError(f, err, "%+v", o)
		f.Add(b)
	}
	if b, err := os.ReadFile("/lib/x86_64-linux-gnu/libc.so.6"); err == nil {
		f.Add(b[:min(len(b), 64<<10)])
	}
	// whole real libraries: dynamic sections and strings past the head
	for _, p := range []string{"/lib/x86_64-linux-gnu/libz.so.1", "/lib/x86_64-linux-gnu/libacl.so.1", "/lib/x86_64-linux-gnu/libdl.so.2"} {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	targets := []*target{}
	for _, arch := range []string{"amd64", "arm64", "ppc64le", "s390x"} {
		t, err := newTarget(arch)
		require.NoError(f, err, "newTarget(%s)", arch)
		targets = append(targets, t)
	}
	f.Fuzz(func(tt *testing.T, data []byte) {
		for _, t := range targets {
			buf := make([]byte, scratchSize)
			size := uint64(len(data))
			fr := newFileReader(bytes.NewReader(data), buf, func() (uint64, bool) { return size, true })
			info, ok := t.readLib(fr, "libfuzz.so.1.2")
			if ok && info.flag&FlagTypeMask != 0 {
				require.True(tt, bytes.HasPrefix(data, []byte("\x7fELF")), "%s accepted a non-ELF file as %+v", t.goarch, info)
			}
			whole := &fileReader{r: bytes.NewReader(data), head: data, size: size, sized: true}
			wi, wok := t.readLib(whole, "libfuzz.so.1.2")
			require.Equal(tt, wok, ok, "%s: windows give %+v, %v; the whole file gives %+v, %v", t.goarch, info, ok, wi, wok)
			require.Equal(tt, wi, info, "%s: windows give %+v, %v; the whole file gives %+v, %v", t.goarch, info, ok, wi, wok)
		}
	})
}
