//go:build !cgo

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-nvc/nvc/internal/testutil"
)

func TestCreateSymlinks(t *testing.T) {
	outside := t.TempDir()
	root := testutil.Tree(t, `
		file usr/lib64/libcuda.so.550.54.15
		symlink usr/lib64/libcuda.so.1 libcuda.so.1.old
		file usr/lib64/libnvidia-ml.so.1 "a file in the way"
		dir usr/lib64/libdir.so.1
		symlink lib64 usr/lib64
		symlink escape `+outside+`
		symlink abs /usr/lib64
	`)
	tests := []struct {
		name, link, target string
		code               int
		at                 string // where the link must appear (inside root)
	}{
		{"new link, new parents", "/usr/local/lib/libcuda.so", "libcuda.so.1", 0, "usr/local/lib/libcuda.so"},
		{"replaces a different link", "/usr/lib64/libcuda.so.1", "libcuda.so.550.54.15", 0, "usr/lib64/libcuda.so.1"},
		{"a file at a SONAME link", "/usr/lib64/libnvidia-ml.so.1", "libnvidia-ml.so.550.54.15", 1, ""},
		{"through a symlinked parent", "/lib64/libcuda.so", "libcuda.so.1", 0, "usr/lib64/libcuda.so"},
		{"absolute parent link resolved in root", "/abs/libx.so", "x", 0, "usr/lib64/libx.so"},
		{"absolute parent link dangles inside", "/escape/libcuda.so", "x", 1, ""},
		{"relative escape stays inside", "/../../libcuda.so.2", "libcuda.so.1", 0, "libcuda.so.2"},
		{"directory at a SONAME link", "/usr/lib64/libdir.so.1", "libdir.so.1.2", 1, ""},
		{"directory at an extra link, kept", "/usr/lib64/libdir.so.1", "x", 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stderr := runHook(t, root, "create-symlinks", "--link", tt.target+"::"+tt.link)
			require.Equal(t, tt.code, code, "exit status (%s)", stderr)
			if tt.at == "" {
				return
			}
			got, err := os.Readlink(filepath.Join(root, tt.at))
			require.NoError(t, err, "%s: readlink", tt.at)
			require.Equal(t, tt.target, got, "%s: readlink", tt.at)
		})
	}
	entries, err := os.ReadDir(outside)
	require.NoError(t, err)
	assert.Empty(t, entries, "created outside the root")
	b, err := os.ReadFile(filepath.Join(root, "usr/lib64/libnvidia-ml.so.1"))
	if assert.NoError(t, err, "the image's libnvidia-ml.so.1") {
		assert.Equal(t, "a file in the way", string(b), "the image's libnvidia-ml.so.1: want it unchanged")
	}
	assertNoTemps(t, filepath.Join(root, "usr/lib64"))
}

// The image ships regular files at libcuda.so (a link the toolkit adds)
// and at libnvidia-ml.so.1 (a SONAME link). create-symlinks decides as
// Apply does (package liblink, TestPlace): libcuda.so is kept and the log
// names it; libnvidia-ml.so.1 is refused with an error naming it. Neither
// file is replaced (the hook used to replace both without a word).
func TestCreateSymlinksImageFiles(t *testing.T) {
	root := testutil.Tree(t, `
		file usr/lib64/libcuda.so "image libcuda.so"
		file usr/lib64/libnvidia-ml.so.1 "image libnvidia-ml.so.1"
	`)
	code, stderr := runHook(t, root, "create-symlinks", "--link", "libcuda.so.1::/usr/lib64/libcuda.so",
		"--link", "libnvidia-ml.so.550.54.15::/usr/lib64/libnvidia-ml.so.1")
	msg := "want exit 1, a note naming libcuda.so and an error naming libnvidia-ml.so.1"
	assert.Equal(t, 1, code, msg)
	assert.Contains(t, stderr, `link=/usr/lib64/libcuda.so `, msg)
	assert.Contains(t, stderr, "found=\"regular file\"", msg)
	assert.Contains(t, stderr, `"/usr/lib64/libnvidia-ml.so.1" is a regular file`, msg)
	for _, f := range []string{"libcuda.so", "libnvidia-ml.so.1"} {
		b, err := os.ReadFile(filepath.Join(root, "usr/lib64", f))
		if assert.NoError(t, err, "the image's %s", f) {
			assert.Equal(t, "image "+f, string(b), "the image's %s: want it unchanged", f)
		}
	}
}

func TestCreateSymlinksIdempotent(t *testing.T) {
	root := testutil.Tree(t, "dir usr/lib64\n")
	args := []string{"create-symlinks", "--link", "libcuda.so.1::/usr/lib64/libcuda.so", "--link", "libcuda.so.1::/usr/lib64/libcuda.so"}
	for i := range 2 {
		code, stderr := runHook(t, root, args...)
		require.Equal(t, 0, code, "run %d: exit status: %s", i, stderr)
	}
	got, err := os.Readlink(filepath.Join(root, "usr/lib64/libcuda.so"))
	require.NoError(t, err, "readlink")
	require.Equal(t, "libcuda.so.1", got, "readlink")
	assertNoTemps(t, filepath.Join(root, "usr/lib64"))
}

func assertNoTemps(t *testing.T, dir string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	for _, e := range entries {
		assert.NotContains(t, e.Name(), ".nvc-", "temporary left in %s", dir)
	}
}

func TestParseLinks(t *testing.T) {
	got, err := parseLinks([]string{"a::/x/y/", "a::/x/y", "b::/x/y", "../c.so::/lib/c"})
	require.NoError(t, err)
	want := []linkPair{{"a", "/x/y"}, {"b", "/x/y"}, {"../c.so", "/lib/c"}}
	require.Equal(t, want, got)
	for _, bad := range []string{"", "::/x", "a::", "a:/x", "a::/"} {
		t.Run(fmt.Sprintf("%q", bad), func(t *testing.T) {
			_, err := parseLinks([]string{bad})
			assert.Error(t, err, "parseLinks(%q) accepted", bad)
		})
	}
}
