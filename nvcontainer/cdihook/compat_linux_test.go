package cdihook

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-nvc/nvc/internal/elfwriter"
	"github.com/go-nvc/nvc/internal/testutil"
)

// compatConfs returns the 00-compat-*.conf files in root's
// /etc/ld.so.conf.d (a host view), name to content.
func compatConfs(t *testing.T, root string) map[string]string {
	t.Helper()
	matches, err := filepath.Glob(filepath.Join(root, "etc/ld.so.conf.d/00-compat-*.conf"))
	require.NoError(t, err)
	out := map[string]string{}
	for _, m := range matches {
		fi, err := os.Lstat(m)
		require.NoError(t, err)
		assert.Equal(t, os.FileMode(0o644), fi.Mode(), "%s mode", m)
		b, _ := os.ReadFile(m)
		out[filepath.Base(m)] = string(b)
	}
	return out
}

func TestEnableCUDACompat(t *testing.T) {
	outside := testutil.Tree(t, "file compat/libcuda.so.570.86.10\n")
	tests := []struct {
		name, tree, driver string
		use                bool
	}{
		{"newer", "file usr/local/cuda/compat/libcuda.so.570.86.10\ndir etc/ld.so.conf.d\n", "550.54.15", true},
		{"newer, no ld.so.conf.d yet", "file usr/local/cuda/compat/libcuda.so.570.86.10\n", "550.54.15", true},
		{"newer, driver major only", "file usr/local/cuda/compat/libcuda.so.570.86.10\n", "550", true},
		{"same major", "file usr/local/cuda/compat/libcuda.so.550.90.07\n", "550.54.15", false},
		{"older", "file usr/local/cuda/compat/libcuda.so.535.104.05\n", "550.54.15", false},
		{"two libraries", "file usr/local/cuda/compat/libcuda.so.570.86.10\nfile usr/local/cuda/compat/libcuda.so.575.1.2\n", "550.54.15", false},
		{"only the SONAME link", "symlink usr/local/cuda/compat/libcuda.so.570.86.10 libcuda.so.1\nfile usr/local/cuda/compat/libcuda.so.1\n", "550.54.15", false},
		{"a directory", "dir usr/local/cuda/compat/libcuda.so.570.86.10\n", "550.54.15", false},
		{"a FIFO (never opened: a reader would block)", "fifo usr/local/cuda/compat/libcuda.so.570.86.10\n", "550.54.15", false},
		{"a FIFO beside the file", "file usr/local/cuda/compat/libcuda.so.570.86.10\nfifo usr/local/cuda/compat/libcuda.so.575.1.2\n", "550.54.15", true},
		{"link beside the file", "file usr/local/cuda/compat/libcuda.so.570.86.10\nsymlink usr/local/cuda/compat/libcuda.so.580.1.1 libcuda.so.570.86.10\n", "550.54.15", true},
		{"no compat dir", "dir usr/local/cuda\n", "550.54.15", false},
		{"compat is a file", "file usr/local/cuda/compat\n", "550.54.15", false},
		{"version-named cuda dir", "file usr/local/cuda-12.8/compat/libcuda.so.570.86.10\nsymlink usr/local/cuda cuda-12.8\n", "550.54.15", true},
		{"absolute link resolved in the root", "file opt/cuda/compat/libcuda.so.570.86.10\nsymlink usr/local/cuda /opt/cuda\n", "550.54.15", true},
		{"link out of the root", "dir usr/local\nsymlink usr/local/cuda " + outside + "\n", "550.54.15", false},
		{"no driver version", "file usr/local/cuda/compat/libcuda.so.570.86.10\n", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := testutil.Tree(t, tt.tree)
			res, err := runCompat(root, tt.driver)
			require.NoError(t, err)
			assert.Equal(t, tt.use, res.Enabled, "Enabled (reason %q)", res.Reason)
			confs := compatConfs(t, root)
			if !tt.use {
				assert.NotEmpty(t, res.Reason, "no reason given for not using compat")
				assert.Empty(t, confs, "wrote confs, want nothing")
				return
			}
			assert.Equal(t, []string{"libcuda.so.570.86.10"}, res.Libraries, "libraries found")
			assert.Empty(t, res.Reason, "a reason given when compat is used")
			require.Len(t, confs, 1, "want one 00-compat-*.conf")
			for _, content := range confs {
				assert.Equal(t, "/usr/local/cuda/compat\n", content, "want the compat dir")
			}
		})
	}
	entries, _ := os.ReadDir(filepath.Join(outside, "compat"))
	assert.Len(t, entries, 1, "outside the root changed")
}

func TestEnableCUDACompatErrors(t *testing.T) {
	outside := t.TempDir()
	root := testutil.Tree(t, "file usr/local/cuda/compat/libcuda.so.570.86.10\ndir etc\nsymlink etc/ld.so.conf.d "+outside+"\n")
	// A dangling link is not followed to make its target.
	_, err := runCompat(root, "550.54.15")
	assert.ErrorContains(t, err, "creating /etc/ld.so.conf.d", "ld.so.conf.d dangling")
	testutil.BuildTree(t, root, "dir "+outside[1:]+"\n")
	for _, v := range []string{"x.1", "-1.2", "+5"} {
		t.Run(v, func(t *testing.T) {
			_, err := runCompat(root, v)
			assert.ErrorContains(t, err, `parsing host driver version "`+v+`"`, "version %q: want the version quoted", v)
		})
	}
	// ld.so.conf.d is an absolute symlink: it is resolved inside the root,
	// never followed out.
	_, err = runCompat(root, "550.54.15")
	require.NoError(t, err)
	entries, _ := os.ReadDir(outside)
	assert.Empty(t, entries, "wrote outside the root")
	m, _ := filepath.Glob(filepath.Join(root, outside, "00-compat-*.conf"))
	assert.Len(t, m, 1, "compat confs at the link's target inside the root")
}

// compatRoot is a Debian-layout rootfs with the driver's libcuda.so.1
// (a library of the host driver's version) in /usr/lib64, and the image's
// compat libcuda.so.<compat> with its SONAME link.
func compatRoot(t *testing.T, compat string) string {
	t.Helper()
	root := testutil.Tree(t, `
file    etc/debian_version "12.5\n"
file    etc/ld.so.conf "include /etc/ld.so.conf.d/*.conf\n"
dir     etc/ld.so.conf.d
dir     usr/lib64
dir     usr/local/cuda/compat
symlink usr/lib64/libcuda.so.1 libcuda.so.550.54.15
symlink usr/local/cuda/compat/libcuda.so.1 libcuda.so.`+compat+`
`)
	for _, f := range []string{"usr/lib64/libcuda.so.550.54.15", "usr/local/cuda/compat/libcuda.so." + compat} {
		require.NoError(t, elfwriter.WriteFile(filepath.Join(root, f), elfwriter.Library("libcuda.so.1"), 0o755))
	}
	return root
}

// compatThenCache runs what a spec runs: EnableCUDACompat, then
// UpdateLDCache with /usr/lib64; it returns the compat dirs scanned first.
func compatThenCache(t *testing.T, root, driver string) []string {
	t.Helper()
	_, err := runCompat(root, driver)
	require.NoError(t, err, "EnableCUDACompat")
	return updateLDCache(t, root, "/usr/lib64").CompatDirs
}

// ldconfigLibcuda is what glibc's ldconfig -p (the peer) lists for
// libcuda.so.1 in root's cache; the first is what the loader takes.
func ldconfigLibcuda(t *testing.T, root string) []string {
	t.Helper()
	var libcuda []string
	for _, e := range testutil.LdconfigEntries(t, filepath.Join(root, "etc/ld.so.cache")) {
		if strings.HasPrefix(e, "libcuda.so.1 ") {
			libcuda = append(libcuda, e)
		}
	}
	return libcuda
}

// The spec's order: enable-cuda-compat, then update-ldcache --folder
// /usr/lib64. With a newer compat library the cache lists it first for
// libcuda.so.1, which is the one the loader takes (checked with glibc's
// ldconfig -p, the peer); with an older one the driver's comes first.
func TestCompatFirstInCache(t *testing.T) {
	for _, tc := range []struct {
		compat, first string
		n             int
	}{
		{"570.86.10", "/usr/local/cuda/compat/libcuda.so.1", 2},
		{"535.104.05", "/usr/lib64/libcuda.so.1", 1},
	} {
		t.Run(tc.compat, func(t *testing.T) {
			root := compatRoot(t, tc.compat)
			compat := compatThenCache(t, root, "550.54.15")
			if tc.n == 2 {
				assert.Equal(t, []string{CompatDir}, compat, "compat dirs scanned first")
			}
			if got := findInCache(t, root, "libcuda.so.1"); assert.Len(t, got, tc.n, "cache entries for libcuda.so.1") {
				assert.Equal(t, tc.first, got[0].Path, "cache entries for libcuda.so.1: %+v, want %s first", got, tc.first)
			}
			libcuda := ldconfigLibcuda(t, root)
			if assert.Len(t, libcuda, tc.n, "ldconfig -p lists libcuda.so.1") {
				assert.True(t, strings.HasSuffix(libcuda[0], "=> "+tc.first), "ldconfig -p lists libcuda.so.1 as %q, want %s first", libcuda, tc.first)
			}
		})
	}
}

// Every container start runs the hooks again on the same writable layer:
// EnableCUDACompat must converge to what one run leaves. Two runs with a
// compat library newer than the driver leave one entry (its own name;
// the entries of an earlier version of this hook and of NVIDIA's are
// removed, a file of the image that names another dir is kept) and the
// compat libcuda.so.1 is first in the cache; a run after the host driver
// was upgraded past the compat library leaves none, and the driver's
// libcuda.so.1 is first.
func TestCompatConverges(t *testing.T) {
	root := compatRoot(t, "570.86.10")
	testutil.BuildTree(t, root, `
file etc/ld.so.conf.d/00-compat-0123456789ab.conf "/usr/local/cuda/compat\n"
file etc/ld.so.conf.d/00-compat-3f2504e0-4f89-11d3-9a0c-0305e82c3301.conf "/usr/local/cuda/compat\n"
file etc/ld.so.conf.d/00-compat-fedcba987654.conf "/opt/image\n"
`)
	image := map[string]string{"00-compat-fedcba987654.conf": "/opt/image\n"}
	for i, tc := range []struct {
		driver, first string
		ours          bool
	}{
		{"550.54.15", "/usr/local/cuda/compat/libcuda.so.1", true},
		{"550.54.15", "/usr/local/cuda/compat/libcuda.so.1", true},
		{"575.10.01", "/usr/lib64/libcuda.so.1", false},
		{"575.10.01", "/usr/lib64/libcuda.so.1", false},
	} {
		// The runs are steps on one root: a failed step stops the sequence.
		require.True(t, t.Run(fmt.Sprintf("%d driver %s", i, tc.driver), func(t *testing.T) {
			compatThenCache(t, root, tc.driver)
			want := maps.Clone(image)
			if tc.ours {
				want[compatConfName] = "/usr/local/cuda/compat\n"
			}
			assert.Equal(t, want, compatConfs(t, root), "driver %s: ld.so.conf.d", tc.driver)
			if got := findInCache(t, root, "libcuda.so.1"); assert.NotEmpty(t, got, "driver %s: cache entries for libcuda.so.1", tc.driver) {
				assert.Equal(t, tc.first, got[0].Path, "driver %s: cache entries for libcuda.so.1: %+v, want %s first", tc.driver, got, tc.first)
			}
			libcuda := ldconfigLibcuda(t, root)
			if assert.NotEmpty(t, libcuda, "driver %s: ldconfig -p lists no libcuda.so.1", tc.driver) {
				assert.True(t, strings.HasSuffix(libcuda[0], "=> "+tc.first), "driver %s: ldconfig -p lists libcuda.so.1 as %q, want %s first", tc.driver, libcuda, tc.first)
			}
		}), "step %d (driver %s) failed", i, tc.driver)
	}
}

// The first run after the toolkit's hook (or an older nvc) reports what
// it removed.
func TestCompatReportsRemoved(t *testing.T) {
	root := compatRoot(t, "570.86.10")
	testutil.BuildTree(t, root, `file etc/ld.so.conf.d/00-compat-0123456789ab.conf "/usr/local/cuda/compat\n"`+"\n")
	res, err := runCompat(root, "550.54.15")
	require.NoError(t, err)
	assert.True(t, res.Enabled)
	assert.Equal(t, []string{"00-compat-0123456789ab.conf"}, res.Removed)
	res, err = runCompat(root, "575.10.01")
	require.NoError(t, err)
	assert.False(t, res.Enabled)
	assert.Equal(t, []string{compatConfName}, res.Removed)
	assert.Contains(t, res.Reason, "not newer than the host driver (major 575)")
}
