package cdihook

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-nvc/nvc/internal/elfwriter"
	"github.com/go-nvc/nvc/internal/testutil"
)

func TestUpdateLDCache(t *testing.T) {
	root := libRoot(t)
	res := updateLDCache(t, root, "/opt/nv")
	assert.Empty(t, res.CompatDirs, "compat dirs of a root without 00-compat-*.conf")
	got := findInCache(t, root, "libnvtest.so.1")
	require.Len(t, got, 1, "cache entries for libnvtest.so.1, want one at /opt/nv/libnvtest.so.1")
	require.Equal(t, "/opt/nv/libnvtest.so.1", got[0].Path, "cache entries for libnvtest.so.1")
}

func TestUpdateLDCacheWithoutFolderLeavesLibraryOut(t *testing.T) {
	for _, opts := range []struct {
		name string
		opts *LDCacheOptions
	}{{"nil options", nil}, {"no folders", &LDCacheOptions{}}} {
		t.Run(opts.name, func(t *testing.T) {
			root := libRoot(t)
			_, err := UpdateLDCache(context.Background(), root, opts.opts)
			require.NoError(t, err)
			require.Empty(t, findInCache(t, root, "libnvtest.so.1"), "cache lists libnvtest.so.1 without a folder")
		})
	}
}

// A symlink at /etc/ld.so.cache pointing out of the root must be replaced,
// not written through.
func TestUpdateLDCacheDoesNotFollowPlantedLink(t *testing.T) {
	root := libRoot(t)
	outside := filepath.Join(t.TempDir(), "host-cache")
	require.NoError(t, os.WriteFile(outside, []byte("host"), 0o644))
	require.NoError(t, os.Symlink(outside, filepath.Join(root, "etc/ld.so.cache")))
	updateLDCache(t, root, "/opt/nv")
	b, err := os.ReadFile(outside)
	require.NoError(t, err)
	require.Equal(t, "host", string(b), "file outside the root was changed")
	require.Len(t, findInCache(t, root, "libnvtest.so.1"), 1, "cache inside the root not written")
}

// A context already done leaves the cache unwritten.
func TestUpdateLDCacheContext(t *testing.T) {
	root := libRoot(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := UpdateLDCache(ctx, root, &LDCacheOptions{Folders: []string{"/opt/nv"}})
	require.ErrorIs(t, err, context.Canceled)
	_, err = os.Lstat(filepath.Join(root, "etc/ld.so.cache"))
	assert.ErrorIs(t, err, os.ErrNotExist, "a canceled update wrote ld.so.cache")
}

func TestReadCompatConfs(t *testing.T) {
	root := testutil.Tree(t, `
file    etc/ld.so.conf.d/00-compat-b.conf "/usr/local/cuda/compat\n# comment\n\n  /opt/b  # trailing\nrelative/dir\n"
file    etc/ld.so.conf.d/00-compat-a.conf "/opt/a/\n/usr/local/cuda/compat\n"
file    etc/ld.so.conf.d/00-nvcr-x.conf "/not/compat\n"
dir     etc/ld.so.conf.d/00-compat-dir.conf
fifo    etc/ld.so.conf.d/00-compat-fifo.conf
symlink etc/ld.so.conf.d/00-compat-link.conf /srv/c.conf
file    srv/c.conf "/srv/lib\n"
`)
	got, err := compatDirs(root)
	want := []string{"/opt/a", "/usr/local/cuda/compat", "/opt/b", "/srv/lib"}
	if assert.NoError(t, err, "compatDirs") {
		assert.Equal(t, want, got, "compatDirs: files in name order, links followed in the root, others skipped")
	}
	got, err = compatDirs(testutil.Tree(t, "dir etc\n"))
	assert.NoError(t, err, "without ld.so.conf.d")
	assert.Nil(t, got, "without ld.so.conf.d")
}

// NVIDIA's spec mounts libnvidia-egl-wayland.so.1.1.13 without its
// SONAME link; the toolkit's ldconfig run makes it, so must we: in the
// folders, never through a link out of the root, never over a file.
func TestUpdateLDCacheMakesSonameLinks(t *testing.T) {
	outside := t.TempDir()
	root := libRoot(t)
	lib := "usr/lib/x86_64-linux-gnu"
	for _, name := range []string{"libnvidia-egl-wayland.so.1.1.13", "libnvidia-egl-gbm.so.1.1.2", "libnvidia-egl-xcb.so.1"} {
		soname := name[:strings.Index(name, ".so.")+5]
		require.NoError(t, os.MkdirAll(filepath.Join(root, lib), 0o755))
		require.NoError(t, elfwriter.WriteFile(filepath.Join(root, lib, name), elfwriter.Library(soname), 0o644))
	}
	require.NoError(t, elfwriter.WriteFile(filepath.Join(outside, "libout.so.2.0"), elfwriter.Library("libout.so.2"), 0o644))
	require.NoError(t, os.Symlink(outside, filepath.Join(root, "opt/out")))
	require.NoError(t, os.WriteFile(filepath.Join(root, lib, "libnvidia-egl-gbm.so.1"), []byte("image's"), 0o644))
	updateLDCache(t, root, "/"+lib, "/opt/out")
	target, err := os.Readlink(filepath.Join(root, lib, "libnvidia-egl-wayland.so.1"))
	require.NoError(t, err, "SONAME link of libnvidia-egl-wayland")
	assert.Equal(t, "libnvidia-egl-wayland.so.1.1.13", target)
	b, err := os.ReadFile(filepath.Join(root, lib, "libnvidia-egl-gbm.so.1"))
	require.NoError(t, err)
	assert.Equal(t, "image's", string(b), "a file in the way was replaced")
	got := findInCache(t, root, "libnvidia-egl-wayland.so.1")
	require.Len(t, got, 1)
	assert.Equal(t, "/"+lib+"/libnvidia-egl-wayland.so.1", got[0].Path)
	entries, err := os.ReadDir(outside)
	require.NoError(t, err)
	assert.Len(t, entries, 1, "a link was made outside the root")
}
