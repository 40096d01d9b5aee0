//go:build !cgo

package main

import (
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/go-nvc/nvc/internal/elfwriter"
	"github.com/go-nvc/nvc/internal/testutil"
)

// compatConfs returns the 00-compat-*.conf files in root's
// /etc/ld.so.conf.d (a host view), name to content.
func compatConfs(t *testing.T, root string) map[string]string {
	t.Helper()
	matches, err := filepath.Glob(filepath.Join(root, "etc/ld.so.conf.d/00-compat-*.conf"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, m := range matches {
		fi, err := os.Lstat(m)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode() != 0o644 {
			t.Errorf("%s has mode %v, want 0644", m, fi.Mode())
		}
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
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			confs := compatConfs(t, root)
			if !tt.use {
				if len(confs) != 0 {
					t.Errorf("wrote %v, want nothing", confs)
				}
				return
			}
			if len(confs) != 1 {
				t.Fatalf("wrote %v, want one 00-compat-*.conf", confs)
			}
			for _, content := range confs {
				if content != "/usr/local/cuda/compat\n" {
					t.Errorf("content %q, want the compat dir", content)
				}
			}
		})
	}
	if entries, _ := os.ReadDir(filepath.Join(outside, "compat")); len(entries) != 1 {
		t.Errorf("outside the root changed: %v", entries)
	}
}

func TestEnableCUDACompatErrors(t *testing.T) {
	outside := t.TempDir()
	root := testutil.Tree(t, "file usr/local/cuda/compat/libcuda.so.570.86.10\ndir etc\nsymlink etc/ld.so.conf.d "+outside+"\n")
	// A dangling link is not followed to make its target.
	if code, stderr := runHook(t, root, "enable-cuda-compat", "--host-driver-version", "550.54.15"); code != 1 || !strings.Contains(stderr, "creating /etc/ld.so.conf.d") {
		t.Errorf("ld.so.conf.d dangling: exit %d, %q; want 1", code, stderr)
	}
	testutil.BuildTree(t, root, "dir "+outside[1:]+"\n")
	for _, v := range []string{"x.1", "-1.2", "+5"} {
		if code, stderr := runHook(t, root, "enable-cuda-compat", "--host-driver-version", v); code != 1 || !strings.Contains(stderr, `parsing --host-driver-version "`+v+`"`) {
			t.Errorf("version %q: exit %d, %q; want 1 and the version quoted", v, code, stderr)
		}
	}
	// ld.so.conf.d is an absolute symlink: it is resolved inside the root,
	// never followed out.
	if code, stderr := runHook(t, root, "enable-cuda-compat", "--host-driver-version", "550.54.15"); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 0 {
		t.Errorf("wrote outside the root: %v", entries)
	}
	if m, _ := filepath.Glob(filepath.Join(root, outside, "00-compat-*.conf")); len(m) != 1 {
		t.Errorf("compat confs at the link's target inside the root: %q, want 1", m)
	}
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
		if err := elfwriter.WriteFile(filepath.Join(root, f), elfwriter.Library("libcuda.so.1"), 0o755); err != nil {
			t.Fatal(err)
		}
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
				if code, stderr := runHook(t, root, args...); code != 0 {
					t.Fatalf("%v: exit %d: %s", args, code, stderr)
				}
			}
			if got := findInCache(t, root, "libcuda.so.1"); len(got) != tc.n || got[0].Path != tc.first {
				t.Errorf("cache entries for libcuda.so.1: %+v, want %d with %s first", got, tc.n, tc.first)
			}
			var libcuda []string
			for _, e := range testutil.LdconfigEntries(t, filepath.Join(root, "etc/ld.so.cache")) {
				if strings.HasPrefix(e, "libcuda.so.1 ") {
					libcuda = append(libcuda, e)
				}
			}
			if len(libcuda) != tc.n || !strings.HasSuffix(libcuda[0], "=> "+tc.first) {
				t.Errorf("ldconfig -p lists libcuda.so.1 as %q, want %s first", libcuda, tc.first)
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
	if err != nil || !slices.Equal(got, want) {
		t.Errorf("compatDirs = %q, %v; want %q (files in name order, links followed in the root, others skipped)", got, err, want)
	}
	if got, err := compatDirs(testutil.Tree(t, "dir etc\n")); err != nil || got != nil {
		t.Errorf("without ld.so.conf.d: %q, %v", got, err)
	}
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
	for _, tc := range []struct {
		driver, first string
		ours          bool
	}{
		{"550.54.15", "/usr/local/cuda/compat/libcuda.so.1", true},
		{"550.54.15", "/usr/local/cuda/compat/libcuda.so.1", true},
		{"575.10.01", "/usr/lib64/libcuda.so.1", false},
		{"575.10.01", "/usr/lib64/libcuda.so.1", false},
	} {
		for _, args := range [][]string{
			{"enable-cuda-compat", "--host-driver-version", tc.driver},
			{"update-ldcache", "--folder", "/usr/lib64"},
		} {
			if code, stderr := runHook(t, root, args...); code != 0 {
				t.Fatalf("%v: exit %d: %s", args, code, stderr)
			}
		}
		want := maps.Clone(image)
		if tc.ours {
			want[compatConfName] = "/usr/local/cuda/compat\n"
		}
		if got := compatConfs(t, root); !maps.Equal(got, want) {
			t.Errorf("driver %s: ld.so.conf.d holds %q, want %q", tc.driver, got, want)
		}
		if got := findInCache(t, root, "libcuda.so.1"); len(got) == 0 || got[0].Path != tc.first {
			t.Errorf("driver %s: cache entries for libcuda.so.1: %+v, want %s first", tc.driver, got, tc.first)
		}
		var libcuda []string // what glibc's ldconfig -p (the peer) reads, first is what the loader takes
		for _, e := range testutil.LdconfigEntries(t, filepath.Join(root, "etc/ld.so.cache")) {
			if strings.HasPrefix(e, "libcuda.so.1 ") {
				libcuda = append(libcuda, e)
			}
		}
		if len(libcuda) == 0 || !strings.HasSuffix(libcuda[0], "=> "+tc.first) {
			t.Errorf("driver %s: ldconfig -p lists libcuda.so.1 as %q, want %s first", tc.driver, libcuda, tc.first)
		}
	}
}
