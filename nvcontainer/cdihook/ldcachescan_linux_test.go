package cdihook

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/go-nvc/nvc/internal/elfwriter"
	"github.com/go-nvc/nvc/internal/testutil"
	"github.com/go-nvc/nvc/ldcache"
)

// The toolkit's layout: the spec's libraries mounted into the image's
// system libdir, some without their SONAME links, one link stale, one
// file in the way, a legacy hwcap and a glibc-hwcaps subdirectory, a
// compat dir, an image dir outside the folders whose missing link must
// stay missing, and the image's cache written before the mounts.
const (
	sysLib    = "usr/lib/x86_64-linux-gnu"
	compatDir = "usr/local/cuda/compat"
)

// scanRootSpec is the image before the driver's libraries are added.
const scanRootSpec = `
file    etc/debian_version "12\n"
file    etc/ld.so.conf "include /etc/ld.so.conf.d/*.conf\n/usr/lib/other\n"
file    etc/ld.so.conf.d/00-compat-1.conf "/usr/local/cuda/compat\n"
file    etc/ld.so.conf.d/x86_64-linux-gnu.conf "/usr/lib/x86_64-linux-gnu\n"
dir     usr/lib/other
dir     usr/local/cuda/compat
dir     usr/lib/x86_64-linux-gnu/tls
dir     usr/lib/x86_64-linux-gnu/glibc-hwcaps/x86-64-v3
symlink usr/lib/x86_64-linux-gnu/libz.so.1 libz.so.1.2.13
`

// scanRootLibs are the libraries (path, SONAME); the image's first.
var scanRootLibs = [][2]string{
	{sysLib + "/libz.so.1.2.13", "libz.so.1"},
	{sysLib + "/libimg.so.3.0", "libimg.so.3"},
	{"usr/lib/other/libother.so.2.0", "libother.so.2"},
}

// scanDriverLibs are the spec's libraries, added after the image's cache.
var scanDriverLibs = [][2]string{
	{sysLib + "/libcuda.so.550.54", "libcuda.so.1"},
	{sysLib + "/libnvidia-ml.so.550.54", "libnvidia-ml.so.1"},
	{sysLib + "/libnvidia-egl-wayland.so.1.1.13", "libnvidia-egl-wayland.so.1"},
	{sysLib + "/libnvidia-egl-gbm.so.1.1.2", "libnvidia-egl-gbm.so.1"},
	{sysLib + "/tls/libnvidia-tls.so.550.54", "libnvidia-tls.so.550.54"},
	{sysLib + "/tls/libnvtls.so.1.0", "libnvtls.so.1"},
	{sysLib + "/glibc-hwcaps/x86-64-v3/libnvv3.so.1.0", "libnvv3.so.1"},
	{compatDir + "/libcuda.so.560.1", "libcuda.so.1"},
}

// scanRoot builds the root: the image, its cache, then the driver's
// files.
func scanRoot(t *testing.T) string {
	t.Helper()
	root := testutil.Tree(t, scanRootSpec)
	writeLibs(t, root, scanRootLibs)
	require.NoError(t, ldcache.Update(context.Background(), root, nil), "the image's cache")
	writeLibs(t, root, scanDriverLibs)
	testutil.BuildTree(t, root, `
symlink usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1 libnvidia-ml.so.535.1
file    usr/lib/x86_64-linux-gnu/libnvidia-egl-gbm.so.1 "image's"
symlink usr/lib/x86_64-linux-gnu/glibc-hwcaps/x86-64-v3/libgone.so.1 libgone.so.1.0
symlink usr/lib/other/libgone.so.1 libgone.so.1.0
`)
	return root
}

func writeLibs(t *testing.T, root string, libs [][2]string) {
	t.Helper()
	for _, l := range libs {
		require.NoError(t, elfwriter.WriteFile(filepath.Join(root, l[0]), elfwriter.Library(l[1]), 0o644))
	}
}

// twoPassLDCache is UpdateLDCache as it was before it made the links and
// the cache in one scan: ldconfig -n over the compat dirs and folders,
// then the incremental update.
func twoPassLDCache(t *testing.T, root string, folders []string) {
	t.Helper()
	first, err := compatDirs(root)
	require.NoError(t, err)
	dirs := append(slices.Clip(first), folders...)
	_, err = ldcache.Build(context.Background(), root, &ldcache.BuildOptions{Dirs: dirs, OnlyDirs: true, Family: ldcache.FamilyLib64})
	require.NoError(t, err)
	require.NoError(t, ldcache.Update(context.Background(), root, &ldcache.UpdateOptions{FirstDirs: first, Dirs: folders, Incremental: true}))
}

// treeListing lists every entry of root below /usr and the cache: type,
// link target or content digest.
func treeListing(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		require.NoError(t, err)
		rel, _ := filepath.Rel(root, p)
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			require.NoError(t, err)
			out = append(out, rel+" -> "+target)
		case d.IsDir():
			out = append(out, rel+"/")
		default:
			b, err := os.ReadFile(p)
			require.NoError(t, err)
			sum := sha256.Sum256(b)
			out = append(out, rel+" "+hex.EncodeToString(sum[:8]))
		}
		return nil
	})
	require.NoError(t, err)
	return out
}

// UpdateLDCache makes the same links, and the same cache byte for byte,
// as the two passes it replaced (ldconfig -n of the folders, then the
// update), on a root where links are missing, stale or in the way.
func TestUpdateLDCacheOneScanSameResult(t *testing.T) {
	folders := []string{"/" + sysLib}
	want := scanRoot(t)
	twoPassLDCache(t, want, folders)
	got := scanRoot(t)
	res := updateLDCache(t, got, folders...)
	require.Equal(t, []string{"/" + compatDir}, res.CompatDirs)

	require.Equal(t, treeListing(t, want), treeListing(t, got), "files and links after the update")
	wantCache, err := os.ReadFile(filepath.Join(want, "etc/ld.so.cache"))
	require.NoError(t, err)
	gotCache, err := os.ReadFile(filepath.Join(got, "etc/ld.so.cache"))
	require.NoError(t, err)
	require.True(t, bytes.Equal(wantCache, gotCache), "the cache differs from the two-pass one")

	for link, target := range map[string]string{
		sysLib + "/libnvidia-egl-wayland.so.1": "libnvidia-egl-wayland.so.1.1.13",
		sysLib + "/libnvidia-ml.so.1":          "libnvidia-ml.so.550.54",
		sysLib + "/libcuda.so.1":               "libcuda.so.550.54",
		sysLib + "/libimg.so.3":                "libimg.so.3.0",
		sysLib + "/tls/libnvtls.so.1":          "libnvtls.so.1.0",
		compatDir + "/libcuda.so.1":            "libcuda.so.560.1",
	} {
		got, err := os.Readlink(filepath.Join(got, link))
		if assert.NoError(t, err, "SONAME link %s", link) {
			assert.Equal(t, target, got, "SONAME link %s", link)
		}
	}
	for _, absent := range []string{
		"usr/lib/other/libother.so.2",                   // the image's own directory is left alone
		sysLib + "/glibc-hwcaps/x86-64-v3/libnvv3.so.1", // no links in glibc-hwcaps
		sysLib + "/glibc-hwcaps/x86-64-v3/libgone.so.1", // but a stale one is removed
	} {
		_, err := os.Lstat(filepath.Join(got, absent))
		assert.ErrorIs(t, err, fs.ErrNotExist, "%s", absent)
	}
	_, err = os.Lstat(filepath.Join(got, "usr/lib/other/libgone.so.1"))
	assert.NoError(t, err, "a stale link in the image's own directory was removed")
	b, err := os.ReadFile(filepath.Join(got, sysLib, "libnvidia-egl-gbm.so.1"))
	require.NoError(t, err)
	assert.Equal(t, "image's", string(b), "a file in the way was replaced")
	cuda := findInCache(t, got, "libcuda.so.1")
	require.NotEmpty(t, cuda)
	assert.Equal(t, "/"+compatDir+"/libcuda.so.1", cuda[0].Path, "the compat dir's libcuda.so.1 comes first")
}

// A folder on a read-only mount gets no links, as before, and its
// libraries are still listed.
func TestUpdateLDCacheOneScanReadOnlyFolder(t *testing.T) {
	testutil.RequireRoot(t)
	for _, tc := range []struct {
		name string
		run  func(t *testing.T, root string, folders []string)
	}{
		{"two passes", twoPassLDCache},
		{"UpdateLDCache", func(t *testing.T, root string, folders []string) { updateLDCache(t, root, folders...) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := scanRoot(t)
			ro := filepath.Join(root, "opt/ro")
			require.NoError(t, os.MkdirAll(ro, 0o755))
			writeLibs(t, root, [][2]string{{"opt/ro/libro.so.1.0", "libro.so.1"}})
			require.NoError(t, unix.Mount(ro, ro, "", unix.MS_BIND, ""))
			t.Cleanup(func() { unix.Unmount(ro, unix.MNT_DETACH) })
			require.NoError(t, unix.Mount("", ro, "", unix.MS_REMOUNT|unix.MS_BIND|unix.MS_RDONLY, ""))
			tc.run(t, root, []string{"/opt/ro", "/" + sysLib})
			_, err := os.Lstat(filepath.Join(ro, "libro.so.1"))
			assert.ErrorIs(t, err, fs.ErrNotExist, "a link in a read-only folder")
			got := findInCache(t, root, "libro.so.1")
			require.Len(t, got, 1)
			assert.Equal(t, "/opt/ro/libro.so.1", got[0].Path)
			_, err = os.Readlink(filepath.Join(root, sysLib, "libnvidia-egl-wayland.so.1"))
			assert.NoError(t, err, "the next folder's links")
		})
	}
}

// Each library of the folders and compat dirs is opened once: the links
// and the cache come from one scan.
func TestUpdateLDCacheOneScanOpensOnce(t *testing.T) {
	root := scanRoot(t)
	dirs := []string{sysLib, sysLib + "/tls", sysLib + "/glibc-hwcaps/x86-64-v3", compatDir}
	counts := watchOpens(t, root, dirs, func() { updateLDCache(t, root, "/"+sysLib) })
	for _, l := range append(slices.Clip(scanRootLibs[:2]), scanDriverLibs...) {
		assert.Equal(t, 1, counts[l[0]], "opens of %s", l[0])
	}
}

// watchOpens counts the files opened (inotify IN_OPEN) in the dirs of
// root while f runs, by path in the root.
func watchOpens(t *testing.T, root string, dirs []string, f func()) map[string]int {
	t.Helper()
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	testutil.RequireKernel(t, "inotify", err)
	defer unix.Close(fd)
	byWD := map[int32]string{}
	for _, d := range dirs {
		wd, err := unix.InotifyAddWatch(fd, filepath.Join(root, d), unix.IN_OPEN)
		require.NoError(t, err, "watching %s", d)
		byWD[int32(wd)] = d
	}
	f()
	counts := map[string]int{}
	buf := make([]byte, 1<<20)
	for {
		n, err := unix.Read(fd, buf)
		if err == unix.EAGAIN {
			return counts
		}
		require.NoError(t, err, "reading inotify events")
		for off := 0; off+unix.SizeofInotifyEvent <= n; {
			ev := (*unix.InotifyEvent)(unsafe.Pointer(&buf[off]))
			name := strings.TrimRight(string(buf[off+unix.SizeofInotifyEvent:off+unix.SizeofInotifyEvent+int(ev.Len)]), "\x00")
			require.Zero(t, ev.Mask&unix.IN_Q_OVERFLOW, "inotify queue overflow")
			if name != "" {
				counts[byWD[ev.Wd]+"/"+name]++
			}
			off += unix.SizeofInotifyEvent + int(ev.Len)
		}
	}
}
