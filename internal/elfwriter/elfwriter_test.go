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
		b, err := o.Bytes()
		if err != nil {
			t.Fatalf("%+v: %v", o, err)
		}
		f, err := elf.NewFile(bytes.NewReader(b))
		if err != nil {
			t.Fatalf("%+v: debug/elf: %v", o, err)
		}
		wantClass, wantMachine := o.Class, o.Machine
		if wantClass == 0 {
			wantClass = elf.ELFCLASS64
		}
		if wantMachine == 0 {
			wantMachine = elf.EM_X86_64
		}
		if f.Class != wantClass || f.Machine != wantMachine || f.Type != elf.ET_DYN || f.OSABI != o.OSABI {
			t.Errorf("%+v: header class %v machine %v type %v osabi %v", o, f.Class, f.Machine, f.Type, f.OSABI)
		}
		sonames, _ := f.DynString(elf.DT_SONAME)
		if got := strings.Join(sonames, ","); got != o.Soname {
			t.Errorf("%+v: SONAME %q", o, got)
		}
		needed, _ := f.DynString(elf.DT_NEEDED)
		if strings.Join(needed, ",") != strings.Join(o.Needed, ",") {
			t.Errorf("%+v: NEEDED %q", o, needed)
		}
		if o.ABITag != nil {
			checkABITag(t, f, o.ABITag)
		}
	}
}

func checkABITag(t *testing.T, f *elf.File, want *elfwriter.ABITag) {
	t.Helper()
	s := f.Section(".note.ABI-tag")
	if s == nil {
		t.Fatal("no .note.ABI-tag section")
	}
	d, err := s.Data()
	if err != nil || len(d) != 32 {
		t.Fatalf("note data %x: %v", d, err)
	}
	u := func(i int) uint32 { return binary.LittleEndian.Uint32(d[i:]) }
	if u(0) != 4 || u(4) != 16 || u(8) != 1 || string(d[12:15]) != "GNU" ||
		u(16) != want.OS || u(20) != want.Major || u(24) != want.Minor || u(28) != want.Patch {
		t.Errorf("note = %x", d)
	}
}

func TestUnsupported(t *testing.T) {
	for _, o := range []*elfwriter.Object{
		{Class: elf.ELFCLASS32, Machine: elf.EM_386, Interp: "/lib/ld-linux.so.2"},
		{Class: 7},
		{Data: 9},
	} {
		if _, err := o.Bytes(); err == nil {
			t.Errorf("%+v: no error", o)
		}
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
	if err != nil {
		t.Fatalf("ldconfig -r: %v\n%s", err, out)
	}
	out, err = exec.Command(ldconfig, "-p", "-C", filepath.Join(root, "etc/ld.so.cache")).CombinedOutput()
	if err != nil {
		t.Fatalf("ldconfig -p: %v\n%s", err, out)
	}
	for _, want := range []string{
		"\tlibcuda.so.1 (libc6,x86-64) => /opt/nv/libcuda.so.1\n",
		// glibc 2.33+ no longer records the ABI note's OS version.
		"\tlibnvidia-tls.so.550.54.15 (libc6,x86-64) => /opt/nv/libnvidia-tls.so.550.54.15\n",
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("ldconfig -p lacks %q:\n%s", want, out)
		}
	}
	if l, err := os.Readlink(filepath.Join(dir, "libcuda.so.1")); err != nil || l != "libcuda.so.550.54.15" {
		t.Errorf("ldconfig made no SONAME link: %q %v", l, err)
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
	if err := os.Mkdir(lib, 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(lib, "libcuda.so.1"), &elfwriter.Object{Soname: "libcuda.so.1"})

	out, err := exec.Command(prog).CombinedOutput()
	if code := exitCode(err); code != 127 || !strings.Contains(string(out), "libcuda.so.1: cannot open shared object file") {
		t.Errorf("without the library: exit %d, output %q; want 127 and a loader error", code, out)
	}
	cmd := exec.Command(prog)
	cmd.Env = []string{"LD_LIBRARY_PATH=" + lib}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("with the library: %v %q", err, out)
	}
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
	if err := elfwriter.WriteFile(path, o, 0o755); err != nil {
		t.Fatal(err)
	}
}

func ExampleLibrary() {
	b, _ := elfwriter.Library("libcuda.so.1", "libc.so.6").Bytes()
	f, _ := elf.NewFile(bytes.NewReader(b))
	soname, _ := f.DynString(elf.DT_SONAME)
	fmt.Println(f.Class, f.Machine, soname)
	// Output: ELFCLASS64 EM_X86_64 [libcuda.so.1]
}
