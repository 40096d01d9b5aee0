package main

import (
	"bytes"
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-nvc/nvc/internal/elfwriter"
	"github.com/go-nvc/nvc/internal/testutil"
)

// glibc runs glibc's ldconfig; with -r it gates on root, which makes
// ldconfig chroot into ROOT as the comparisons assume.
func glibc(t *testing.T, args ...string) string {
	t.Helper()
	if slices.Contains(args, "-r") {
		testutil.RequireRoot(t)
	}
	out, err := exec.Command(testutil.GlibcLdconfig(t), args...).Output()
	require.NoError(t, err, "ldconfig %s", strings.Join(args, " "))
	return string(out)
}

// ours builds this command once per test binary and runs it.
func ours(t *testing.T, args ...string) string {
	t.Helper()
	bin := filepath.Join(binDir, "ldconfig")
	if _, err := os.Stat(bin); err != nil {
		testutil.GoBuild(t, ".", ".", bin)
	}
	cmd := exec.Command(bin, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "examples/ldconfig %s\n%s", strings.Join(args, " "), stderr.Bytes())
	return string(out)
}

var binDir string

func TestMain(m *testing.M) {
	d, err := os.MkdirTemp("", "ldconfig-bin")
	if err != nil {
		panic(err)
	}
	binDir = d
	code := m.Run()
	os.RemoveAll(d)
	os.Exit(code)
}

const tree = `
file etc/debian_version "12.5\n"
file etc/ld.so.conf "include /etc/ld.so.conf.d/*.conf\n/opt/extra\n"
file etc/ld.so.conf.d/a.conf "/opt/a  # comment\ninclude sub/*.conf\n/opt/link\n/lib/i386-linux-gnu\n"
file etc/ld.so.conf.d/sub/b.conf "/opt/b\n"
file opt/a/libnotelf.so.1 "plain text\n"
symlink opt/link a
symlink opt/updir ../../../opt/b
dir opt/b
dir opt/extra
dir lib/x86_64-linux-gnu/glibc-hwcaps/x86-64-v4
symlink lib/x86_64-linux-gnu/libfoo.so.1 libfoo.so.1.2
symlink lib/x86_64-linux-gnu/libfoo.so libfoo.so.1
symlink lib/x86_64-linux-gnu/libstale.so.3 libgone.so.3
`

func fixture(t *testing.T) string {
	t.Helper()
	root := testutil.Tree(t, tree)
	libs := map[string]*elfwriter.Object{
		"lib/x86_64-linux-gnu/libfoo.so.1.2":                        {Soname: "libfoo.so.1", Needed: []string{"libc.so.6"}},
		"lib/x86_64-linux-gnu/libfoo.so.1.10":                       {Soname: "libfoo.so.1"},
		"lib/x86_64-linux-gnu/glibc-hwcaps/x86-64-v3/libfoo.so.1.2": {Soname: "libfoo.so.1"},
		"lib/x86_64-linux-gnu/libnew.so.4.0":                        {Soname: "libnew.so.4"},
		"lib/i386-linux-gnu/libfoo.so.1":                            {Class: elf.ELFCLASS32, Machine: elf.EM_386, Soname: "libfoo.so.1", Needed: []string{"libc.so.6"}},
		"lib/i386-linux-gnu/libelf32.so.2":                          {Class: elf.ELFCLASS32, Machine: elf.EM_386, Soname: "libelf32.so.2"},
		"opt/a/libnosoname.so":                                      {},
		"opt/b/libx32.so.1":                                         {Class: elf.ELFCLASS32, Soname: "libx32.so.1"},
		"opt/extra/libarm.so.1":                                     {Machine: elf.EM_AARCH64, Soname: "libarm.so.1"},
		"opt/extra/libextra.so.2":                                   {Soname: "libextra.so.2"},
	}
	for p, o := range libs {
		full := filepath.Join(root, p)
		require.NoError(t, os.MkdirAll(filepath.Dir(full), 0o755))
		require.NoError(t, elfwriter.WriteFile(full, o, 0o644), "writing %s", p)
	}
	return root
}

// TestPrintHost: `ldconfig -p` on this host's cache, ours and glibc's.
func TestPrintHost(t *testing.T) {
	if _, err := os.Stat(defaultCache); err != nil {
		testutil.Unavailable(t, "no %s: %v", defaultCache, err)
	}
	want := glibc(t, "-p")
	got := ours(t, "-p")
	assert.Equal(t, want, got, "-p differs from glibc's:\n%s", firstDiff(want, got))
	got = ours(t, "-p", "-C", defaultCache)
	assert.Equal(t, want, got, "-p -C %s differs from glibc's:\n%s", defaultCache, firstDiff(want, got))
}

// TestPrintGlibcCaches: -p on caches glibc wrote in each format.
func TestPrintGlibcCaches(t *testing.T) {
	root := fixture(t)
	for _, f := range []string{"new", "compat", "old"} {
		t.Run(f, func(t *testing.T) {
			glibc(t, "-r", root, "-X", "-c", f, "-C", "/etc/"+f+".cache")
			p := filepath.Join(root, "etc", f+".cache")
			want := glibc(t, "-p", "-C", p)
			require.GreaterOrEqual(t, strings.Count(want, "\n"), 8, "%s: fixture too small:\n%s", f, want)
			got := ours(t, "-p", "-C", p)
			assert.Equal(t, want, got, "%s: -p differs from glibc's:\n%s", f, firstDiff(want, got))
			assert.Equal(t, glibc(t, "-r", root, "-p", "-C", "/etc/"+f+".cache"), ours(t, "-r", root, "-p", "-C", "/etc/"+f+".cache"),
				"%s: -r ROOT -p differs from glibc's", f)
		})
	}
}

// TestBuildLikeGlibc: our `-r ROOT -C A` and glibc's `-r ROOT -C B` make
// glibc print the same listing; with glibc's generator string the files
// are byte-identical.
func TestBuildLikeGlibc(t *testing.T) {
	root := fixture(t)
	for _, f := range []string{"new", "compat", "old"} {
		t.Run(f, func(t *testing.T) {
			glibc(t, "-r", root, "-X", "-c", f, "-C", "/etc/glibc."+f)
			b := filepath.Join(root, "etc/glibc."+f)
			want := glibc(t, "-p", "-C", b)
			gen := generatorOf(want)
			ours(t, "-r", root, "-X", "-c", f, "-C", "/etc/ours."+f)
			a := filepath.Join(root, "etc/ours."+f)
			got := glibc(t, "-p", "-C", a)
			assert.Equal(t, rename(withGenerator(want, "github.com/go-nvc/nvc/ldcache"), b), rename(got, a),
				"%s: glibc lists our cache differently:\n%s", f, firstDiff(rename(want, b), rename(got, a)))
			ours(t, "-r", root, "-X", "-c", f, "-C", "/etc/ours."+f, "--generator="+gen)
			assert.Equal(t, rename(want, b), rename(glibc(t, "-p", "-C", a), a),
				"%s: with glibc's generator, glibc lists our cache differently", f)
			wantB, err := os.ReadFile(b)
			require.NoError(t, err)
			gotB, err := os.ReadFile(a)
			require.NoError(t, err)
			assert.Equal(t, wantB, gotB, "%s: files differ (%d bytes vs glibc's %d)", f, len(gotB), len(wantB))
		})
	}
}

// TestVerboseLikeGlibc: -v -N -X lists the same directories and links.
func TestVerboseLikeGlibc(t *testing.T) {
	root := fixture(t)
	want := glibc(t, "-r", root, "-v", "-N", "-X")
	require.Contains(t, want, "glibc-hwcaps/x86-64-v3", "fixture lacks hwcaps in glibc's listing")
	got := ours(t, "-r", root, "-v", "-N", "-X")
	assert.Equal(t, want, got, "-v differs from glibc's:\n%s", firstDiff(want, got))
}

func generatorOf(listing string) string {
	const p = "Cache generated by: "
	i := strings.Index(listing, p)
	if i < 0 {
		return ""
	}
	return strings.TrimSuffix(listing[i+len(p):], "\n")
}

func withGenerator(listing, gen string) string {
	old := generatorOf(listing)
	if old == "" {
		return listing
	}
	return strings.Replace(listing, "Cache generated by: "+old, "Cache generated by: "+gen, 1)
}

func rename(listing, path string) string {
	return strings.Replace(listing, "`"+path+"'", "`CACHE'", 1)
}

func firstDiff(want, got string) string {
	wl, gl := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := range max(len(wl), len(gl)) {
		var w, g string
		if i < len(wl) {
			w = wl[i]
		}
		if i < len(gl) {
			g = gl[i]
		}
		if w != g {
			return "first difference at line " + strconv.Itoa(i+1) + ":\nwant: " + w + "\ngot:  " + g
		}
	}
	return "(no line differs)"
}
