package ldcache_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-nvc/nvc/internal/testutil"
	"github.com/go-nvc/nvc/ldcache"
)

// glibcCache runs glibc's ldconfig over root in format f (without touching
// symlinks) and returns the file it wrote and its parsed form.
func glibcCache(t *testing.T, root string, f ldcache.Format) (string, *ldcache.Cache) {
	t.Helper()
	_, c := glibcWrites(t, root, "-c", f.String())
	return filepath.Join(root, "etc/glibc.cache"), c
}

// printed is `ldconfig -p -C path` with the path in the header line
// replaced by NAME, so listings of two files compare.
func printed(t *testing.T, path string) string {
	t.Helper()
	return strings.Replace(string(runLdconfig(t, "-p", "-C", path)), "`"+path+"'", "`NAME'", 1)
}

func TestBuildMatchesLdconfig(t *testing.T) {
	for _, f := range []ldcache.Format{ldcache.FormatNew, ldcache.FormatCompat, ldcache.FormatOld} {
		t.Run(f.String(), func(t *testing.T) {
			root := debianRoot(t)
			if f == ldcache.FormatNew {
				writeLibs(t, root, legacyHWCapLibs)
			}
			glibcPath, glibc := glibcCache(t, root, f)
			c, err := ldcache.Build(context.Background(), root, &ldcache.BuildOptions{Format: f, Generator: glibc.Generator, NoLinks: true})
			require.NoError(t, err, "Build")
			ours := filepath.Join(root, "etc/ours.cache")
			require.NoError(t, ldcache.WriteFile(ours, c), "WriteFile %s", ours)
			want, got := printed(t, glibcPath), printed(t, ours)
			require.Equal(t, want, got, "ldconfig -p of our cache differs from glibc's")
			require.GreaterOrEqual(t, strings.Count(want, "\n"), 20, "fixture lists too few libraries:\n%s", want)
			wantB, _ := os.ReadFile(glibcPath)
			gotB, _ := os.ReadFile(ours)
			assert.True(t, bytes.Equal(gotB, wantB), "files differ: ours %d bytes, glibc %d bytes", len(gotB), len(wantB))
		})
	}
}

// TestIncludeLoopLikeLdconfig: a configuration that includes itself ends
// (glibc stops when it runs out of file descriptors, Build skips files it
// is reading already) with the same cache.
func TestIncludeLoopLikeLdconfig(t *testing.T) {
	root := testutil.Tree(t, `
file etc/debian_version "12\n"
file etc/ld.so.conf "include loop.d/*.conf\n/opt/x\n"
file etc/loop.d/a.conf "include ../ld.so.conf\n/opt/y\n"
`)
	writeLibs(t, root, []lib{{"opt/x/libx.so.1", x64("libx.so.1")}, {"opt/y/liby.so.1", x64("liby.so.1")}})
	glibcPath, glibc := glibcCache(t, root, ldcache.FormatNew)
	c, err := ldcache.Build(context.Background(), root, &ldcache.BuildOptions{Generator: glibc.Generator, NoLinks: true})
	require.NoError(t, err, "Build")
	got, _ := c.MarshalBinary()
	want, _ := os.ReadFile(glibcPath)
	assert.True(t, bytes.Equal(got, want), "include loop: glibc's cache differs; entries %v", c.Entries)
	assert.Len(t, c.Entries, 2, "include loop: entries")
}

// TestIncludeExplosionBounded: files that include each other many times
// over (which keeps glibc busy for ever) cost Build a bounded number of
// reads.
func TestIncludeExplosionBounded(t *testing.T) {
	spec := "file etc/debian_version \"12\\n\"\nfile etc/ld.so.conf \"include /etc/d0/*.conf\\n/opt/x\\n\"\n"
	for i := range 20 {
		for j := range 4 {
			spec += fmt.Sprintf("file etc/d%d/%d.conf \"include /etc/d%d/*.conf\\n\"\n", i, j, i+1)
		}
	}
	root := testutil.Tree(t, spec)
	writeLibs(t, root, []lib{{"opt/x/libx.so.1", x64("libx.so.1")}})
	c, err := ldcache.Build(context.Background(), root, &ldcache.BuildOptions{NoLinks: true})
	require.NoError(t, err, "Build")
	require.Len(t, c.Entries, 1, "Build = %v", c)
}
