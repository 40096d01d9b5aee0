package cdihook

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-nvc/nvc/internal/rootfs"
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
		fails              bool
		at                 string // where the link must appear (inside root)
		kept               string // what the result says was kept there
	}{
		{"new link, new parents", "/usr/local/lib/libcuda.so", "libcuda.so.1", false, "usr/local/lib/libcuda.so", ""},
		{"replaces a different link", "/usr/lib64/libcuda.so.1", "libcuda.so.550.54.15", false, "usr/lib64/libcuda.so.1", ""},
		{"a file at a SONAME link", "/usr/lib64/libnvidia-ml.so.1", "libnvidia-ml.so.550.54.15", true, "", ""},
		{"through a symlinked parent", "/lib64/libcuda.so", "libcuda.so.1", false, "usr/lib64/libcuda.so", ""},
		{"absolute parent link resolved in root", "/abs/libx.so", "x", false, "usr/lib64/libx.so", ""},
		{"absolute parent link dangles inside", "/escape/libcuda.so", "x", true, "", ""},
		{"relative escape stays inside", "/../../libcuda.so.2", "libcuda.so.1", false, "libcuda.so.2", ""},
		{"directory at a SONAME link", "/usr/lib64/libdir.so.1", "libdir.so.1.2", true, "", ""},
		{"directory at an extra link, kept", "/usr/lib64/libdir.so.1", "x", false, "", "directory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := createSymlinks(root, Link{Target: tt.target, Path: tt.link})
			if tt.fails {
				require.Error(t, err)
			} else {
				require.NoError(t, err)
			}
			if tt.kept != "" {
				assert.Equal(t, []KeptLink{{Link{tt.target, tt.link}, tt.kept}}, res.Kept, "kept")
			} else {
				assert.Empty(t, res.Kept, "kept")
			}
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
// and at libnvidia-ml.so.1 (a SONAME link). CreateSymlinks decides as
// Apply does (package liblink, TestPlace): libcuda.so is kept and the
// result names it; libnvidia-ml.so.1 is refused with an error naming it.
// Neither file is replaced (the hook used to replace both without a word).
func TestCreateSymlinksImageFiles(t *testing.T) {
	root := testutil.Tree(t, `
		file usr/lib64/libcuda.so "image libcuda.so"
		file usr/lib64/libnvidia-ml.so.1 "image libnvidia-ml.so.1"
	`)
	libcuda := Link{"libcuda.so.1", "/usr/lib64/libcuda.so"}
	res, err := createSymlinks(root, libcuda, Link{"libnvidia-ml.so.550.54.15", "/usr/lib64/libnvidia-ml.so.1"})
	msg := "want libcuda.so kept and an error naming libnvidia-ml.so.1"
	assert.Equal(t, []KeptLink{{libcuda, "regular file"}}, res.Kept, msg)
	if assert.Error(t, err, msg) {
		assert.Contains(t, err.Error(), `"/usr/lib64/libnvidia-ml.so.1" is a regular file`, msg)
		assert.ErrorIs(t, err, rootfs.ErrWrongType, msg)
	}
	for _, f := range []string{"libcuda.so", "libnvidia-ml.so.1"} {
		b, err := os.ReadFile(filepath.Join(root, "usr/lib64", f))
		if assert.NoError(t, err, "the image's %s", f) {
			assert.Equal(t, "image "+f, string(b), "the image's %s: want it unchanged", f)
		}
	}
}

func TestCreateSymlinksIdempotent(t *testing.T) {
	root := testutil.Tree(t, "dir usr/lib64\n")
	link := Link{"libcuda.so.1", "/usr/lib64/libcuda.so"}
	for i := range 2 {
		_, err := createSymlinks(root, link, link)
		require.NoError(t, err, "run %d", i)
	}
	got, err := os.Readlink(filepath.Join(root, "usr/lib64/libcuda.so"))
	require.NoError(t, err, "readlink")
	require.Equal(t, "libcuda.so.1", got, "readlink")
	assertNoTemps(t, filepath.Join(root, "usr/lib64"))
}

// A Link that ParseLink would refuse is refused by CreateSymlinks too,
// before anything is made; one with an unclean path is cleaned.
func TestCreateSymlinksChecksLinks(t *testing.T) {
	for _, tt := range []struct {
		name string
		link Link
	}{
		{"relative path", Link{"x", "usr/lib64/libx.so"}},
		{"the root", Link{"x", "/"}},
		{"no target", Link{"", "/usr/lib64/libx.so"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			root := testutil.Tree(t, "dir usr/lib64\n")
			_, err := createSymlinks(root, tt.link)
			require.ErrorContains(t, err, "want a target and an absolute path")
			entries, err := os.ReadDir(filepath.Join(root, "usr/lib64"))
			require.NoError(t, err)
			assert.Empty(t, entries, "made something")
		})
	}
	t.Run("unclean path", func(t *testing.T) {
		root := testutil.Tree(t, "dir usr/lib64\n")
		_, err := createSymlinks(root, Link{"libx.so.1", "//usr/./lib64/../lib64/libx.so"})
		require.NoError(t, err)
		got, err := os.Readlink(filepath.Join(root, "usr/lib64/libx.so"))
		require.NoError(t, err)
		assert.Equal(t, "libx.so.1", got)
	})
}

// A context done before a link stops the run there.
func TestCreateSymlinksContext(t *testing.T) {
	root := testutil.Tree(t, "dir usr/lib64\n")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := CreateSymlinks(ctx, root, &SymlinksOptions{Links: []Link{{"libcuda.so.1", "/usr/lib64/libcuda.so"}}})
	require.ErrorIs(t, err, context.Canceled)
	_, err = os.Lstat(filepath.Join(root, "usr/lib64/libcuda.so"))
	assert.ErrorIs(t, err, os.ErrNotExist, "a canceled run made a link")
}
