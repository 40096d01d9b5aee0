package elfwriter_test

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-nvc/nvc/internal/elfwriter"
	"github.com/go-nvc/nvc/internal/testutil"
)

func TestReadBackWithDebugELF(t *testing.T) {
	for _, o := range []*elfwriter.Object{
		{Soname: "libcuda.so.1", Needed: []string{"libm.so.6", "libc.so.6"}},
		{Class: elf.ELFCLASS32, Machine: elf.EM_386, Soname: "libcuda.so.1", Needed: []string{"libc.so.6"}},
		{Class: elf.ELFCLASS32, Machine: elf.EM_X86_64, Soname: "libx32.so.1"},
		{Machine: elf.EM_AARCH64, Soname: "libaa.so.1"},
		{Class: elf.ELFCLASS32, Machine: elf.EM_ARM, Flags: 0x05000400, Soname: "libhf.so.1"},
		{Machine: elf.EM_S390, Data: elf.ELFDATA2MSB, Soname: "libs390.so.1"},
		{Machine: elf.EM_PPC64, Soname: "libppc.so.1", OSABI: elf.ELFOSABI_LINUX},
		{Needed: []string{"libnvidia-glcore.so.550.54.15"}}, // no SONAME
		{Soname: "libnvidia-tls.so.550.54.15", ABITag: &elfwriter.ABITag{Major: 2, Minor: 3, Patch: 99}},
		{Interp: "/lib64/ld-linux-x86-64.so.2", Needed: []string{"libcuda.so.1"}},
	} {
		t.Run(objectName(o), func(t *testing.T) {
			b, err := o.Bytes()
			require.NoError(t, err, "%+v", o)
			f, err := elf.NewFile(bytes.NewReader(b))
			require.NoError(t, err, "%+v: debug/elf", o)
			wantClass, wantMachine := o.Class, o.Machine
			if wantClass == 0 {
				wantClass = elf.ELFCLASS64
			}
			if wantMachine == 0 {
				wantMachine = elf.EM_X86_64
			}
			assert.Equal(t, wantClass, f.Class, "%+v: header class", o)
			assert.Equal(t, wantMachine, f.Machine, "%+v: header machine", o)
			assert.Equal(t, elf.ET_DYN, f.Type, "%+v: header type", o)
			assert.Equal(t, o.OSABI, f.OSABI, "%+v: header osabi", o)
			sonames, _ := f.DynString(elf.DT_SONAME)
			assert.Equal(t, o.Soname, strings.Join(sonames, ","), "%+v: SONAME", o)
			needed, _ := f.DynString(elf.DT_NEEDED)
			assert.Equal(t, strings.Join(o.Needed, ","), strings.Join(needed, ","), "%+v: NEEDED %q", o, needed)
			if o.ABITag != nil {
				checkABITag(t, f, o.ABITag)
			}
		})
	}
}

// objectName names a table row: its SONAME, else what it is, with any
// class and machine other than the defaults.
func objectName(o *elfwriter.Object) string {
	name := o.Soname
	switch {
	case o.Interp != "":
		name = "executable"
	case name == "":
		name = "no SONAME"
	}
	if o.Class != 0 {
		name += "/" + o.Class.String()
	}
	if o.Machine != 0 {
		name += "/" + o.Machine.String()
	}
	return name
}

func checkABITag(t *testing.T, f *elf.File, want *elfwriter.ABITag) {
	t.Helper()
	s := f.Section(".note.ABI-tag")
	require.NotNil(t, s, "no .note.ABI-tag section")
	d, err := s.Data()
	require.NoError(t, err, "note data %x", d)
	require.Len(t, d, 32, "note data %x", d)
	u := func(i int) uint32 { return binary.LittleEndian.Uint32(d[i:]) }
	assert.Equal(t, []uint32{4, 16, 1}, []uint32{u(0), u(4), u(8)}, "note = %x: namesz, descsz, type", d)
	assert.Equal(t, "GNU", string(d[12:15]), "note = %x: name", d)
	assert.Equal(t, []uint32{want.OS, want.Major, want.Minor, want.Patch}, []uint32{u(16), u(20), u(24), u(28)}, "note = %x: OS and version", d)
}

func TestUnsupported(t *testing.T) {
	for _, tc := range []struct {
		name string
		o    *elfwriter.Object
	}{
		{"32-bit executable", &elfwriter.Object{Class: elf.ELFCLASS32, Machine: elf.EM_386, Interp: "/lib/ld-linux.so.2"}},
		{"bad class", &elfwriter.Object{Class: 7}},
		{"bad data encoding", &elfwriter.Object{Data: 9}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.o.Bytes()
			assert.Error(t, err, "%+v: no error", tc.o)
		})
	}
}

// glibc's ldconfig is the peer that must accept our libraries.
func TestLdconfigAcceptsLibraries(t *testing.T) {
	ldconfig := testutil.RequireCommand(t, "ldconfig")
	root := testutil.Tree(t, "file etc/ld.so.conf /opt/nv\ndir opt/nv")
	dir := filepath.Join(root, "opt/nv")
	write(t, filepath.Join(dir, "libcuda.so.550.54.15"), &elfwriter.Object{Soname: "libcuda.so.1"})
	write(t, filepath.Join(dir, "libnvidia-tls.so.550.54.15"), &elfwriter.Object{Soname: "libnvidia-tls.so.550.54.15", ABITag: &elfwriter.ABITag{Major: 2, Minor: 3, Patch: 99}})
	out, err := exec.Command(ldconfig, "-r", root).CombinedOutput()
	require.NoError(t, err, "ldconfig -r:\n%s", out)
	out, err = exec.Command(ldconfig, "-p", "-C", filepath.Join(root, "etc/ld.so.cache")).CombinedOutput()
	require.NoError(t, err, "ldconfig -p:\n%s", out)
	for _, want := range []string{
		"\tlibcuda.so.1 (libc6,x86-64) => /opt/nv/libcuda.so.1\n",
		// glibc 2.33+ no longer records the ABI note's OS version.
		"\tlibnvidia-tls.so.550.54.15 (libc6,x86-64) => /opt/nv/libnvidia-tls.so.550.54.15\n",
	} {
		assert.Contains(t, string(out), want, "ldconfig -p")
	}
	l, err := os.Readlink(filepath.Join(dir, "libcuda.so.1"))
	if assert.NoError(t, err, "ldconfig made no SONAME link") {
		assert.Equal(t, "libcuda.so.550.54.15", l, "ldconfig's SONAME link")
	}
}

// The dynamic loader is the peer that must load our objects: the executable
// runs only when the library it needs is found.
func TestLoaderRunsExecutable(t *testing.T) {
	const interp = "/lib64/ld-linux-x86-64.so.2"
	if _, err := os.Stat(interp); err != nil {
		testutil.Unavailable(t, "needs the x86-64 glibc loader: %v", err)
	}
	dir := t.TempDir()
	prog := filepath.Join(dir, "needs-libcuda")
	write(t, prog, &elfwriter.Object{Interp: interp, Needed: []string{"libcuda.so.1"}})
	lib := filepath.Join(dir, "lib")
	require.NoError(t, os.Mkdir(lib, 0o755))
	write(t, filepath.Join(lib, "libcuda.so.1"), &elfwriter.Object{Soname: "libcuda.so.1"})

	out, err := exec.Command(prog).CombinedOutput()
	assert.Equal(t, 127, exitCode(err), "without the library: exit code; output %q", out)
	assert.Contains(t, string(out), "libcuda.so.1: cannot open shared object file", "without the library: want a loader error")
	cmd := exec.Command(prog)
	cmd.Env = []string{"LD_LIBRARY_PATH=" + lib}
	out, err = cmd.CombinedOutput()
	assert.NoError(t, err, "with the library: %q", out)
}

func exitCode(err error) int {
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode()
	}
	if err != nil {
		return -1
	}
	return 0
}

func write(t *testing.T, path string, o *elfwriter.Object) {
	t.Helper()
	require.NoError(t, elfwriter.WriteFile(path, o, 0o755))
}

func ExampleLibrary() {
	b, _ := elfwriter.Library("libcuda.so.1", "libc.so.6").Bytes()
	f, _ := elf.NewFile(bytes.NewReader(b))
	soname, _ := f.DynString(elf.DT_SONAME)
	fmt.Println(f.Class, f.Machine, soname)
	// Output: ELFCLASS64 EM_X86_64 [libcuda.so.1]
}
