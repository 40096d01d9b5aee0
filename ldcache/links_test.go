package ldcache_test

import (
	"bytes"
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-nvc/nvc/internal/testutil"
	"github.com/go-nvc/nvc/ldcache"
)

// treeListing describes every file under root: path, type and, for
// symlinks, the target.
func treeListing(t *testing.T, root string) string {
	t.Helper()
	var lines []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if strings.HasPrefix(rel, "etc/") && strings.HasSuffix(rel, ".cache") {
			return nil
		}
		line := rel + " " + d.Type().String()
		if d.Type()&fs.ModeSymlink != 0 {
			target, _ := os.Readlink(p)
			line += " -> " + target
		}
		lines = append(lines, line)
		return nil
	})
	require.NoError(t, err, "walk %s", root)
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

// TestLinksLikeLdconfig: with Links, Build creates, replaces and removes
// the same symlinks glibc's ldconfig (without -X) does on an identical
// root, prints the same -v listing, and writes the same cache.
func TestLinksLikeLdconfig(t *testing.T) {
	theirs, ours := debianRoot(t), debianRoot(t)
	// A wrong SONAME link to replace and a regular file in a link's place.
	for _, r := range []string{theirs, ours} {
		require.NoError(t, os.Symlink("libnv.so.535.1", filepath.Join(r, "opt/a/libnv.so.1")))
		require.NoError(t, os.WriteFile(filepath.Join(r, "opt/b/libb.so.1.0"), []byte("x"), 0o644))
	}
	require.Equal(t, treeListing(t, theirs), treeListing(t, ours), "fixtures differ before the test")
	wantV := runLdconfig(t, "-r", theirs, "-v", "-C", "/etc/glibc.cache")
	glibc, err := ldcache.Open(filepath.Join(theirs, "etc/glibc.cache"))
	require.NoError(t, err, "open glibc's cache")
	var gotV bytes.Buffer
	c, err := ldcache.Build(context.Background(), ours, &ldcache.BuildOptions{Verbose: &gotV, Generator: glibc.Generator})
	require.NoError(t, err, "Build")
	require.NoError(t, ldcache.WriteFile(filepath.Join(ours, "etc/glibc.cache"), c), "WriteFile")
	require.Contains(t, string(wantV), "(changed)", "glibc changed no link; the fixture tests nothing")
	assert.Equal(t, string(wantV), strings.ReplaceAll(gotV.String(), ours, theirs), "-v listing differs (glibc, ours)")
	assert.Equal(t, treeListing(t, theirs), treeListing(t, ours), "trees differ after linking (glibc, ours)")
	a, _ := os.ReadFile(filepath.Join(theirs, "etc/glibc.cache"))
	b, _ := os.ReadFile(filepath.Join(ours, "etc/glibc.cache"))
	assert.True(t, bytes.Equal(a, b), "caches differ: %d vs %d bytes", len(b), len(a))
}

// TestLinksOffWritesNothing: without Links, Build leaves the root as it
// was (ldconfig -X), dangling links included.
func TestLinksOffWritesNothing(t *testing.T) {
	root := debianRoot(t)
	before := treeListing(t, root)
	_, err := ldcache.Build(context.Background(), root, &ldcache.BuildOptions{NoLinks: true})
	require.NoError(t, err, "Build")
	assert.Equal(t, before, treeListing(t, root), "Build without Links changed the root")
}

// TestZeroOptionsLink: nil and zero BuildOptions mean plain ldconfig -r,
// which writes the SONAME links, not ldconfig -X.
func TestZeroOptionsLink(t *testing.T) {
	for name, opts := range map[string]*ldcache.BuildOptions{"nil": nil, "zero": {}} {
		t.Run(name, func(t *testing.T) {
			root := debianRoot(t)
			before := treeListing(t, root)
			_, err := ldcache.Build(context.Background(), root, opts)
			require.NoError(t, err, "Build")
			assert.NotEqual(t, before, treeListing(t, root), "Build with %s options wrote no link", name)
		})
	}
}

// TestLinkDirsLikeLinksFirst: NoLinks with LinkDirs makes, in one scan,
// the links `ldconfig -n DIRS` makes (in Dirs, their glibc-hwcaps and
// legacy hwcap subdirectories, stale ones removed) and the cache a
// NoLinks build after it lists; the other directories are only read.
func TestLinkDirsLikeLinksFirst(t *testing.T) {
	dirs := []string{"/opt/a", "/lib/x86_64-linux-gnu"}
	theirs, ours := debianRoot(t), debianRoot(t)
	for _, r := range []string{theirs, ours} {
		writeLibs(t, r, legacyHWCapLibs)
		writeLibs(t, r, []lib{{"lib/x86_64-linux-gnu/libnew.so.3.1", x64("libnew.so.3")}, {"lib/x86_64-linux-gnu/tls/libnvtls.so.1.0", x64("libnvtls.so.1")}})
		require.NoError(t, os.Symlink("libgone.so.2", filepath.Join(r, "lib/x86_64-linux-gnu/glibc-hwcaps/x86-64-v3/libgone.so.1")))
	}
	before := treeListing(t, ours)
	_, err := ldcache.Build(context.Background(), theirs, &ldcache.BuildOptions{Dirs: dirs, OnlyDirs: true})
	require.NoError(t, err, "ldconfig -n")
	want, err := ldcache.Build(context.Background(), theirs, &ldcache.BuildOptions{Dirs: dirs, NoLinks: true})
	require.NoError(t, err, "Build after the links")
	got, err := ldcache.Build(context.Background(), ours, &ldcache.BuildOptions{Dirs: dirs, NoLinks: true, LinkDirs: true})
	require.NoError(t, err, "Build with LinkDirs")
	require.NotEqual(t, before, treeListing(t, ours), "LinkDirs made no link")
	assert.Equal(t, treeListing(t, theirs), treeListing(t, ours), "links (ldconfig -n then Build, LinkDirs)")
	_, err = os.Lstat(filepath.Join(ours, "usr/local/lib/libdangling.so.1"))
	assert.NoError(t, err, "a stale link outside Dirs was removed")
	a, err := want.MarshalBinary()
	require.NoError(t, err)
	b, err := got.MarshalBinary()
	require.NoError(t, err)
	assert.True(t, bytes.Equal(a, b), "caches differ: %d vs %d bytes", len(b), len(a))
}

// TestUpdateMuslLinkDirs: in a musl root, where no cache is built,
// LinkDirs still makes the links of FirstDirs and Dirs, and only theirs.
func TestUpdateMuslLinkDirs(t *testing.T) {
	root := testutil.Tree(t, "file lib/ld-musl-x86_64.so.1 \"x\"\ndir etc\n")
	writeLibs(t, root, []lib{{"drv/libdrv.so.1.0", x64("libdrv.so.1")}, {"compat/libcuda.so.2.0", x64("libcuda.so.1")}, {"usr/lib/libimg.so.2.0", x64("libimg.so.2")}})
	opts := &ldcache.UpdateOptions{FirstDirs: []string{"/compat"}, Dirs: []string{"/drv"}, LinkDirs: true, GOARCH: "amd64"}
	require.NoError(t, ldcache.Update(context.Background(), root, opts), "Update")
	for link, target := range map[string]string{"drv/libdrv.so.1": "libdrv.so.1.0", "compat/libcuda.so.1": "libcuda.so.2.0"} {
		got, err := os.Readlink(filepath.Join(root, link))
		if assert.NoError(t, err, link) {
			assert.Equal(t, target, got, link)
		}
	}
	_, err := os.Lstat(filepath.Join(root, "usr/lib/libimg.so.2"))
	assert.ErrorIs(t, err, fs.ErrNotExist, "a link in the root's own directory")
}
