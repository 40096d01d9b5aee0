package ldcache_test

import (
	"debug/elf"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/go-nvc/nvc/internal/elfwriter"
	"github.com/go-nvc/nvc/internal/testutil"
)

// lib describes one generated library file in a fixture root.
type lib struct {
	path string
	obj  *elfwriter.Object
}

func x64(soname string, needed ...string) *elfwriter.Object {
	return &elfwriter.Object{Soname: soname, Needed: needed}
}

func i386(soname string, needed ...string) *elfwriter.Object {
	return &elfwriter.Object{Class: elf.ELFCLASS32, Machine: elf.EM_386, Soname: soname, Needed: needed}
}

func x32(soname string) *elfwriter.Object {
	return &elfwriter.Object{Class: elf.ELFCLASS32, Soname: soname, Needed: []string{"libc.so.6"}}
}

func writeLibs(t testing.TB, root string, libs []lib) {
	t.Helper()
	for _, l := range libs {
		p := filepath.Join(root, l.path)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, elfwriter.WriteFile(p, l.obj, 0o644), p)
	}
}

// debianRoot is a Debian-family root with everything the acceptance list
// names: 64-bit, i386 and x32 libraries, glibc-hwcaps/x86-64-v3 (and v2)
// libraries, include directives (absolute, relative, nested, globbed), two
// files with one SONAME, symlinked directories (absolute and relative
// targets, one reaching through "/.."), non-ELF files, libraries without
// SONAME, development and dangling symlinks, a directory listed twice and
// libraries of a foreign machine.
const debianTree = `
file etc/debian_version "12.5\n"
file etc/ld.so.conf "include /etc/ld.so.conf.d/*.conf\n/opt/extra   # trailing comment\n  /opt/twice/\n"
file etc/ld.so.conf.d/00-local.conf "/usr/local/lib\n# comment\ninclude sub/*.conf\n/opt/link\n"
file etc/ld.so.conf.d/10-i386.conf "/lib/i386-linux-gnu\n/usr/lib/i386-linux-gnu\n"
file etc/ld.so.conf.d/20-x32.conf "/libx32=libc6\nhwcap 0 nosegneg\n"
file etc/ld.so.conf.d/ignored.txt "/opt/never\n"
file etc/ld.so.conf.d/sub/b.conf "/opt/b\ninclude /etc/ld.so.conf.d/sub/../deep.d/*.conf\n"
file etc/ld.so.conf.d/deep.d/c.conf "/opt/deep\n/opt/missing\n/opt/twice\n/opt/updir\n"
file opt/a/libnotelf.so.1 "not an ELF file, just text\n"
file opt/a/libscript.so "/* GNU ld script */ GROUP ( libc.so.6 )\n"
file opt/a/libtiny.so.1 "\x7fELF"
file opt/never/libnever.so.1 "x"
symlink opt/link a
symlink opt/updir ../../../../opt/a
symlink usr/local/lib/libdangling.so.1 libgone.so.1
dir opt/extra
dir opt/b
dir opt/deep
dir opt/twice
dir usr/lib/x86_64-linux-gnu/glibc-hwcaps/x86-64-v4
symlink lib/x86_64-linux-gnu/libfoo.so.1 libfoo.so.1.2
symlink lib/x86_64-linux-gnu/libfoo.so libfoo.so.1
symlink lib/x86_64-linux-gnu/libviaroot.so.5 /opt/deep/libdeep.so.5.0
symlink usr/lib/x86_64-linux-gnu/libbar.so libbar.so.2
`

var debianLibs = []lib{
	{"lib/x86_64-linux-gnu/libfoo.so.1.2", x64("libfoo.so.1", "libc.so.6")},
	{"lib/x86_64-linux-gnu/libfoo.so.1.10", x64("libfoo.so.1", "libc.so.6")},
	{"lib/x86_64-linux-gnu/libc.so.6", x64("libc.so.6")},
	{"lib/x86_64-linux-gnu/glibc-hwcaps/x86-64-v3/libfoo.so.1.2", x64("libfoo.so.1")},
	{"lib/x86_64-linux-gnu/glibc-hwcaps/x86-64-v3/libonlyv3.so.7", x64("libonlyv3.so.7")},
	{"lib/x86_64-linux-gnu/glibc-hwcaps/x86-64-v2/libfoo.so.1.2", x64("libfoo.so.1")},
	{"usr/lib/x86_64-linux-gnu/libbar.so.2", x64("libbar.so.2", "libm.so.6")},
	{"usr/lib/x86_64-linux-gnu/libnosoname.so", &elfwriter.Object{}},
	{"usr/lib/x86_64-linux-gnu/libnosoname.so.3", &elfwriter.Object{Needed: []string{"libc.so.6"}}},
	{"usr/lib/x86_64-linux-gnu/libarm.so.1", &elfwriter.Object{Machine: elf.EM_AARCH64, Soname: "libarm.so.1"}},
	{"usr/lib/x86_64-linux-gnu/notalib.so.1", x64("notalib.so.1")},
	{"usr/local/lib/liblocal.so.0", x64("liblocal.so.0")},
	{"lib/i386-linux-gnu/libfoo.so.1", i386("libfoo.so.1", "libc.so.6")},
	{"lib/i386-linux-gnu/libplain32.so.2", i386("libplain32.so.2")},
	{"usr/lib/i386-linux-gnu/libfoo.so.1.9", i386("libfoo.so.1")},
	{"libx32/libfoo.so.1", x32("libfoo.so.1")},
	{"libx32/libplainx32.so.1", &elfwriter.Object{Class: elf.ELFCLASS32, Soname: "libplainx32.so.1"}},
	{"opt/a/libnv.so.550.54.15", x64("libnv.so.1")},
	{"opt/a/libnv.so.535.1", x64("libnv.so.1")},
	{"opt/b/libb.so.1", x64("libb.so.1")},
	{"opt/deep/libdeep.so.5.0", x64("libdeep.so.5")},
	{"opt/extra/libextra.so", x64("libextra.so.9")},
	{"opt/twice/libtwice.so.1", x64("libtwice.so.1")},
}

// debianRoot writes the Debian fixture into a new temp dir.
func debianRoot(t testing.TB) string {
	t.Helper()
	root := testutil.Tree(t, debianTree)
	writeLibs(t, root, debianLibs)
	return root
}

// legacyHWCapLibs are libraries in legacy hwcap subdirectories, which
// glibc 2.36 lists only in the new format (it corrupts its heap writing
// them in old or compat files).
var legacyHWCapLibs = []lib{
	{"lib/x86_64-linux-gnu/tls/libtls.so.1", x64("libtls.so.1")},
	{"lib/x86_64-linux-gnu/x86_64/libplat.so.1", x64("libplat.so.1")},
	{"lib/x86_64-linux-gnu/haswell/x86_64/libplat.so.1", x64("libplat.so.1")},
}

// realisticRoot is a Debian-like root with n libraries (plus development
// symlinks and SONAME links) spread over the usual directories and a
// driver directory listed in ld.so.conf.d, all of them scanned.
func realisticRoot(t testing.TB, n int) string {
	t.Helper()
	root := testutil.Tree(t, `
file etc/debian_version "12.5\n"
file etc/ld.so.conf "include /etc/ld.so.conf.d/*.conf\n"
file etc/ld.so.conf.d/libc.conf "/usr/local/lib\n"
file etc/ld.so.conf.d/x86_64-linux-gnu.conf "/usr/local/lib/x86_64-linux-gnu\n/lib/x86_64-linux-gnu\n/usr/lib/x86_64-linux-gnu\n"
file etc/ld.so.conf.d/nvidia.conf "/usr/lib/x86_64-linux-gnu/nvidia\n"
dir usr/local/lib
`)
	dirs := []string{"usr/lib/x86_64-linux-gnu", "lib/x86_64-linux-gnu", "usr/lib/x86_64-linux-gnu/nvidia"}
	var libs []lib
	for i := range n {
		dir := dirs[i%len(dirs)]
		soname := fmt.Sprintf("libgen%d.so.%d", i, i%7)
		file := fmt.Sprintf("%s/%s.%d.%d", dir, soname, i%3, i%11)
		obj := x64(soname, "libc.so.6")
		obj.Pad = 16 << 10
		libs = append(libs, lib{file, obj})
		testutil.BuildTree(t, root, fmt.Sprintf("symlink %s/libgen%d.so %s\nsymlink %s/%s %s\n", dir, i, soname, dir, soname, filepath.Base(file)))
	}
	writeLibs(t, root, libs)
	return root
}
