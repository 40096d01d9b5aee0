//go:build !cgo

package main

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
		name, tree string
		args       []string
		use        bool
	}{
		{"newer", "file usr/local/cuda/compat/libcuda.so.570.86.10\ndir etc/ld.so.conf.d\n", nil, true},
		{"newer, no ld.so.conf.d yet", "file usr/local/cuda/compat/libcuda.so.570.86.10\n", nil, true},
		{"newer, =VERSION", "file usr/local/cuda/compat/libcuda.so.570.86.10\n", []string{"--host-driver-version=550.54.15"}, true},
		{"same major", "file usr/local/cuda/compat/libcuda.so.550.90.07\n", nil, false},
		{"older", "file usr/local/cuda/compat/libcuda.so.535.104.05\n", nil, false},
		{"two libraries", "file usr/local/cuda/compat/libcuda.so.570.86.10\nfile usr/local/cuda/compat/libcuda.so.575.1.2\n", nil, false},
		{"only the SONAME link", "symlink usr/local/cuda/compat/libcuda.so.570.86.10 libcuda.so.1\nfile usr/local/cuda/compat/libcuda.so.1\n", nil, false},
		{"a directory", "dir usr/local/cuda/compat/libcuda.so.570.86.10\n", nil, false},
		{"a FIFO (never opened: a reader would block)", "fifo usr/local/cuda/compat/libcuda.so.570.86.10\n", nil, false},
		{"a FIFO beside the file", "file usr/local/cuda/compat/libcuda.so.570.86.10\nfifo usr/local/cuda/compat/libcuda.so.575.1.2\n", nil, true},
		{"link beside the file", "file usr/local/cuda/compat/libcuda.so.570.86.10\nsymlink usr/local/cuda/compat/libcuda.so.580.1.1 libcuda.so.570.86.10\n", nil, true},
		{"no compat dir", "dir usr/local/cuda\n", nil, false},
		{"version-named cuda dir", "file usr/local/cuda-12.8/compat/libcuda.so.570.86.10\nsymlink usr/local/cuda cuda-12.8\n", nil, true},
		{"absolute link resolved in the root", "file opt/cuda/compat/libcuda.so.570.86.10\nsymlink usr/local/cuda /opt/cuda\n", nil, true},
		{"link out of the root", "dir usr/local\nsymlink usr/local/cuda " + outside + "\n", nil, false},
		{"no driver version", "file usr/local/cuda/compat/libcuda.so.570.86.10\n", []string{"--host-driver-version="}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := testutil.Tree(t, tt.tree)
			args := tt.args
			if args == nil {
				args = []string{"--host-driver-version", "550.54.15"}
			}
			code, stderr := runHook(t, root, append([]string{"enable-cuda-compat"}, args...)...)
			require.Equal(t, 0, code, "exit status: %s", stderr)
			confs := compatConfs(t, root)
			if !tt.use {
				assert.Empty(t, confs, "wrote confs, want nothing")
				return
			}
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
	code, stderr := runHook(t, root, "enable-cuda-compat", "--host-driver-version", "550.54.15")
	assert.Equal(t, 1, code, "ld.so.conf.d dangling: exit status, stderr %q", stderr)
	assert.Contains(t, stderr, "creating /etc/ld.so.conf.d", "ld.so.conf.d dangling")
	testutil.BuildTree(t, root, "dir "+outside[1:]+"\n")
	for _, v := range []string{"x.1", "-1.2", "+5"} {
		t.Run(v, func(t *testing.T) {
			code, stderr := runHook(t, root, "enable-cuda-compat", "--host-driver-version", v)
			assert.Equal(t, 1, code, "version %q: exit status, stderr %q", v, stderr)
			assert.Contains(t, stderr, `parsing --host-driver-version "`+v+`"`, "version %q: want the version quoted", v)
		})
	}
	// ld.so.conf.d is an absolute symlink: it is resolved inside the root,
	// never followed out.
	code, stderr = runHook(t, root, "enable-cuda-compat", "--host-driver-version", "550.54.15")
	require.Equal(t, 0, code, "exit status: %s", stderr)
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
			for _, args := range [][]string{
				{"enable-cuda-compat", "--host-driver-version", "550.54.15"},
				{"update-ldcache", "--folder", "/usr/lib64"},
			} {
				code, stderr := runHook(t, root, args...)
				require.Equal(t, 0, code, "%v: exit status: %s", args, stderr)
			}
			if got := findInCache(t, root, "libcuda.so.1"); assert.Len(t, got, tc.n, "cache entries for libcuda.so.1") {
				assert.Equal(t, tc.first, got[0].Path, "cache entries for libcuda.so.1: %+v, want %s first", got, tc.first)
			}
			var libcuda []string
			for _, e := range testutil.LdconfigEntries(t, filepath.Join(root, "etc/ld.so.cache")) {
				if strings.HasPrefix(e, "libcuda.so.1 ") {
					libcuda = append(libcuda, e)
				}
			}
			if assert.Len(t, libcuda, tc.n, "ldconfig -p lists libcuda.so.1") {
				assert.True(t, strings.HasSuffix(libcuda[0], "=> "+tc.first), "ldconfig -p lists libcuda.so.1 as %q, want %s first", libcuda, tc.first)
			}
		})
	}
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

// Every container start runs the hooks again on the same writable layer:
// enable-cuda-compat must converge to what one run leaves. Two runs with
// a compat library newer than the driver leave one entry (its own name;
// the entries of an earlier version of this hook and of NVIDIA's are
// removed, a file of the image that names another dir is kept) and the compat libcuda.so.1 is
// first in the cache; a run after the host driver was upgraded past the
// compat library leaves none, and the driver's libcuda.so.1 is first.
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
			for _, args := range [][]string{
				{"enable-cuda-compat", "--host-driver-version", tc.driver},
				{"update-ldcache", "--folder", "/usr/lib64"},
			} {
				code, stderr := runHook(t, root, args...)
				require.Equal(t, 0, code, "%v: exit status: %s", args, stderr)
			}
			want := maps.Clone(image)
			if tc.ours {
				want[compatConfName] = "/usr/local/cuda/compat\n"
			}
			assert.Equal(t, want, compatConfs(t, root), "driver %s: ld.so.conf.d", tc.driver)
			if got := findInCache(t, root, "libcuda.so.1"); assert.NotEmpty(t, got, "driver %s: cache entries for libcuda.so.1", tc.driver) {
				assert.Equal(t, tc.first, got[0].Path, "driver %s: cache entries for libcuda.so.1: %+v, want %s first", tc.driver, got, tc.first)
			}
			var libcuda []string // what glibc's ldconfig -p (the peer) reads, first is what the loader takes
			for _, e := range testutil.LdconfigEntries(t, filepath.Join(root, "etc/ld.so.cache")) {
				if strings.HasPrefix(e, "libcuda.so.1 ") {
					libcuda = append(libcuda, e)
				}
			}
			if assert.NotEmpty(t, libcuda, "driver %s: ldconfig -p lists no libcuda.so.1", tc.driver) {
				assert.True(t, strings.HasSuffix(libcuda[0], "=> "+tc.first), "driver %s: ldconfig -p lists libcuda.so.1 as %q, want %s first", tc.driver, libcuda, tc.first)
			}
		}), "step %d (driver %s) failed", i, tc.driver)
	}
}
