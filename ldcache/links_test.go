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
