package ldcache_test

import (
	"bytes"
	"context"
	"debug/elf"
	"path/filepath"
	"slices"
	"testing"

	"github.com/go-nvc/nvc/internal/elfwriter"
	"github.com/go-nvc/nvc/internal/testutil"
	"github.com/go-nvc/nvc/ldcache"
)

// TestLib64FamilyLikeLdconfig: on a Fedora-like root (no
// /etc/debian_version, usr-merged /lib64, a relative include as Fedora
// ships it) Build scans what Fedora's ldconfig scans. glibc's Debian build
// is the peer: given Fedora's trusted directories as configuration lines
// after the include, it writes the same bytes.
func TestLib64FamilyLikeLdconfig(t *testing.T) {
	root := testutil.Tree(t, `
file etc/redhat-release "Fedora release 40\n"
file etc/ld.so.conf "include ld.so.conf.d/*.conf\n"
file etc/ld.so.conf.d/x.conf "/opt/x\n"
file etc/fedora-as-debian.conf "include ld.so.conf.d/*.conf\n/lib\n/lib64\n/libx32\n/usr/lib\n/usr/lib64\n/usr/libx32\n"
symlink lib usr/lib
symlink lib64 usr/lib64
`)
	writeLibs(t, root, []lib{
		{"usr/lib64/libfoo.so.1.0", x64("libfoo.so.1", "libc.so.6")},
		{"usr/lib64/glibc-hwcaps/x86-64-v3/libfoo.so.1.0", x64("libfoo.so.1")},
		{"usr/lib/libfoo.so.1.0", i386("libfoo.so.1", "libc.so.6")},
		{"opt/x/libx.so.1", x64("libx.so.1")},
	})
	if fam, err := ldcache.DetectFamily(root, "amd64"); err != nil || fam != ldcache.FamilyLib64 {
		t.Fatalf("DetectFamily = %v, %v; want lib64", fam, err)
	}
	want, glibc := glibcWrites(t, root, "-f", "/etc/fedora-as-debian.conf")
	c, err := ldcache.Build(context.Background(), root, &ldcache.BuildOptions{Generator: glibc.Generator, NoLinks: true})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := c.MarshalBinary()
	if !bytes.Equal(got, want) {
		t.Errorf("cache differs:\n%s\n%v", printed(t, filepath.Join(root, "etc/glibc.cache")), c.Entries)
	}
	writeLibs(t, root, []lib{{"usr/lib/x86_64-linux-gnu/libdebianonly.so.1", x64("libdebianonly.so.1")}})
	if c, err := ldcache.Build(context.Background(), root, &ldcache.BuildOptions{NoLinks: true}); err != nil || len(c.Find("libdebianonly.so.1", ldcache.ArchX8664)) != 0 {
		t.Errorf("a lib64 root's ldconfig does not scan the multiarch directories (err %v)", err)
	}
}

func TestTrustedDirs(t *testing.T) {
	for _, tc := range []struct {
		f      ldcache.Family
		goarch string
		want   []string
	}{
		{ldcache.FamilyDebian, "amd64", []string{"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib", "/usr/lib"}},
		{ldcache.FamilyDebian, "arm64", []string{"/lib/aarch64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/lib", "/usr/lib"}},
		{ldcache.FamilyLib64, "amd64", []string{"/lib", "/lib64", "/libx32", "/usr/lib", "/usr/lib64", "/usr/libx32"}},
		{ldcache.FamilyLib64, "ppc64le", []string{"/lib", "/lib64", "/usr/lib", "/usr/lib64"}},
		{ldcache.FamilyMusl, "amd64", nil},
	} {
		if got := ldcache.TrustedDirs(tc.f, tc.goarch); !slices.Equal(got, tc.want) {
			t.Errorf("TrustedDirs(%v, %s) = %q, want %q", tc.f, tc.goarch, got, tc.want)
		}
	}
}

// TestBuildForeignArch: standing in for an aarch64 ldconfig, Build lists
// 64-bit libraries as AArch64 and 32-bit ARM libraries by their float
// ABI. There is no aarch64 ldconfig here to compare with: the expectations
// are glibc's aarch64 readelflib rules, which do not look at e_machine, so
// an x86-64 object in an aarch64 root is listed (as AArch64) too.
func TestBuildForeignArch(t *testing.T) {
	root := testutil.Tree(t, "file etc/debian_version \"12\\n\"\nfile etc/ld.so.conf \"/usr/lib/arm-linux-gnueabihf\\n\"\n")
	writeLibs(t, root, []lib{
		{"usr/lib/aarch64-linux-gnu/liba.so.1", &elfwriter.Object{Machine: elf.EM_AARCH64, Soname: "liba.so.1"}},
		{"usr/lib/aarch64-linux-gnu/libx86.so.1", x64("libx86.so.1")},
		{"usr/lib/arm-linux-gnueabihf/libhf.so.1", &elfwriter.Object{Class: elf.ELFCLASS32, Machine: elf.EM_ARM, Flags: 0x05000400, Soname: "libhf.so.1"}},
		{"usr/lib/arm-linux-gnueabihf/libsf.so.1", &elfwriter.Object{Class: elf.ELFCLASS32, Machine: elf.EM_ARM, Flags: 0x05000200, Soname: "libsf.so.1"}},
	})
	c, err := ldcache.Build(context.Background(), root, &ldcache.BuildOptions{GOARCH: "arm64", NoLinks: true})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]ldcache.Arch{}
	for _, e := range c.Entries {
		got[e.Name] = e.Arch()
		if e.Type() != ldcache.TypeLibc6 {
			t.Errorf("%s: type %v, want libc6", e.Name, e.Type())
		}
	}
	want := map[string]ldcache.Arch{"liba.so.1": ldcache.ArchAArch64, "libx86.so.1": ldcache.ArchAArch64, "libhf.so.1": ldcache.ArchARMHF, "libsf.so.1": ldcache.ArchARMSF}
	if len(got) != len(want) {
		t.Errorf("entries %v, want %v", got, want)
	}
	for n, a := range want {
		if got[n] != a {
			t.Errorf("%s: arch %v, want %v", n, got[n], a)
		}
	}
}
