//go:build !cgo

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

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
			if code != tt.code {
				t.Fatalf("exit %d (%s), want %d", code, stderr, tt.code)
			}
			if tt.at == "" {
				return
			}
			got, err := os.Readlink(filepath.Join(root, tt.at))
			if err != nil || got != tt.target {
				t.Fatalf("%s: readlink = %q, %v; want %q", tt.at, got, err, tt.target)
			}
		})
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 0 {
		t.Errorf("created outside the root: %v", entries)
	}
	if b, err := os.ReadFile(filepath.Join(root, "usr/lib64/libnvidia-ml.so.1")); string(b) != "a file in the way" {
		t.Errorf("the image's libnvidia-ml.so.1: %q, %v; want it unchanged", b, err)
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
	if code != 1 || !strings.Contains(stderr, `link=/usr/lib64/libcuda.so `) || !strings.Contains(stderr, "found=\"regular file\"") ||
		!strings.Contains(stderr, `"/usr/lib64/libnvidia-ml.so.1" is a regular file`) {
		t.Errorf("exit %d, stderr:\n%s\nwant 1, a note naming libcuda.so and an error naming libnvidia-ml.so.1", code, stderr)
	}
	for _, f := range []string{"libcuda.so", "libnvidia-ml.so.1"} {
		if b, err := os.ReadFile(filepath.Join(root, "usr/lib64", f)); string(b) != "image "+f {
			t.Errorf("the image's %s: %q, %v; want it unchanged", f, b, err)
		}
	}
}

func TestCreateSymlinksIdempotent(t *testing.T) {
	root := testutil.Tree(t, "dir usr/lib64\n")
	args := []string{"create-symlinks", "--link", "libcuda.so.1::/usr/lib64/libcuda.so", "--link", "libcuda.so.1::/usr/lib64/libcuda.so"}
	for i := range 2 {
		if code, stderr := runHook(t, root, args...); code != 0 {
			t.Fatalf("run %d: exit %d: %s", i, code, stderr)
		}
	}
	if got, err := os.Readlink(filepath.Join(root, "usr/lib64/libcuda.so")); err != nil || got != "libcuda.so.1" {
		t.Fatalf("readlink = %q, %v", got, err)
	}
	assertNoTemps(t, filepath.Join(root, "usr/lib64"))
}

func assertNoTemps(t *testing.T, dir string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.Contains(e.Name(), ".nvc-") {
			t.Errorf("temporary %s left in %s", e.Name(), dir)
		}
	}
}

func TestParseLinks(t *testing.T) {
	got, err := parseLinks([]string{"a::/x/y/", "a::/x/y", "b::/x/y", "../c.so::/lib/c"})
	if err != nil {
		t.Fatal(err)
	}
	want := []linkPair{{"a", "/x/y"}, {"b", "/x/y"}, {"../c.so", "/lib/c"}}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("got %v, want %v", got, want)
		}
	}
	for _, bad := range []string{"", "::/x", "a::", "a:/x", "a::/"} {
		if _, err := parseLinks([]string{bad}); err == nil {
			t.Errorf("parseLinks(%q) accepted", bad)
		}
	}
}
