package ldcache_test

import (
	"bytes"
	"context"
	"debug/elf"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

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
	fam, err := ldcache.DetectFamily(root, "amd64")
	require.NoError(t, err, "DetectFamily")
	require.Equal(t, ldcache.FamilyLib64, fam, "DetectFamily")
	want, glibc := glibcWrites(t, root, "-f", "/etc/fedora-as-debian.conf")
	c, err := ldcache.Build(context.Background(), root, &ldcache.BuildOptions{Generator: glibc.Generator, NoLinks: true})
	require.NoError(t, err, "Build")
	got, _ := c.MarshalBinary()
	if !bytes.Equal(got, want) {
		assert.Fail(t, "cache differs", "glibc's:\n%s\nours: %v", printed(t, filepath.Join(root, "etc/glibc.cache")), c.Entries)
	}
	writeLibs(t, root, []lib{{"usr/lib/x86_64-linux-gnu/libdebianonly.so.1", x64("libdebianonly.so.1")}})
	c, err = ldcache.Build(context.Background(), root, &ldcache.BuildOptions{NoLinks: true})
	if assert.NoError(t, err, "Build with a multiarch library") {
		assert.Empty(t, c.Find("libdebianonly.so.1", ldcache.ArchX8664), "a lib64 root's ldconfig does not scan the multiarch directories")
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
		t.Run(fmt.Sprintf("%v-%s", tc.f, tc.goarch), func(t *testing.T) {
			assert.Equal(t, tc.want, ldcache.TrustedDirs(tc.f, tc.goarch), "TrustedDirs(%v, %s)", tc.f, tc.goarch)
		})
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
	require.NoError(t, err, "Build")
	got := map[string]ldcache.Arch{}
	for _, e := range c.Entries {
		got[e.Name] = e.Arch()
		assert.Equal(t, ldcache.TypeLibc6, e.Type(), "%s: type", e.Name)
	}
	want := map[string]ldcache.Arch{"liba.so.1": ldcache.ArchAArch64, "libx86.so.1": ldcache.ArchAArch64, "libhf.so.1": ldcache.ArchARMHF, "libsf.so.1": ldcache.ArchARMSF}
	assert.Equal(t, want, got, "entries and their arch")
}
