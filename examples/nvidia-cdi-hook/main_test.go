//go:build !cgo

package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-nvc/nvc/internal/elfwriter"
	"github.com/go-nvc/nvc/internal/testutil"
	"github.com/go-nvc/nvc/ldcache"
)

// runHook runs the program with args and the state {"root": rootfs} on
// stdin, and returns the exit status and stderr.
func runHook(t *testing.T, rootfs string, args ...string) (int, string) {
	t.Helper()
	return runHookStdin(t, `{"ociVersion":"1.0.2","id":"t","status":"creating","pid":1,"bundle":"/nonexistent","root":"`+rootfs+`"}`, args...)
}

// runHookStdin runs the program with args and stdin, and returns the exit
// status and stderr.
func runHookStdin(t *testing.T, stdin string, args ...string) (int, string) {
	t.Helper()
	var stderr bytes.Buffer
	code := run(args, strings.NewReader(stdin), &stderr, "")
	return code, stderr.String()
}

// libRoot is a rootfs whose only library is /opt/nv/libnvtest.so.1, in a
// dir that neither ld.so.conf nor the loader's defaults name.
func libRoot(t *testing.T) string {
	t.Helper()
	root := testutil.Tree(t, "dir etc\nfile etc/ld.so.conf \"\"\ndir opt/nv\n")
	if err := elfwriter.WriteFile(filepath.Join(root, "opt/nv/libnvtest.so.1"), elfwriter.Library("libnvtest.so.1"), 0o644); err != nil {
		t.Fatal(err)
	}
	return root
}

func findInCache(t *testing.T, root, soname string) []ldcache.Entry {
	t.Helper()
	c, err := ldcache.OpenInRoot(root, "/etc/ld.so.cache")
	if err != nil {
		t.Fatal(err)
	}
	return c.Find(soname, ldcache.ArchX8664)
}

func TestUpdateLDCache(t *testing.T) {
	root := libRoot(t)
	if code, stderr := runHook(t, root, "update-ldcache", "--folder", "/opt/nv", "--ldconfig-path", "/sbin/ldconfig"); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	got := findInCache(t, root, "libnvtest.so.1")
	if len(got) != 1 || got[0].Path != "/opt/nv/libnvtest.so.1" {
		t.Fatalf("cache entries for libnvtest.so.1 = %+v, want one at /opt/nv/libnvtest.so.1", got)
	}
}

func TestUpdateLDCacheWithoutFolderLeavesLibraryOut(t *testing.T) {
	root := libRoot(t)
	if code, stderr := runHook(t, root, "update-ldcache"); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if got := findInCache(t, root, "libnvtest.so.1"); len(got) != 0 {
		t.Fatalf("cache lists %+v without --folder", got)
	}
}

// A symlink at /etc/ld.so.cache pointing out of the root must be replaced,
// not written through.
func TestUpdateLDCacheDoesNotFollowPlantedLink(t *testing.T) {
	root := libRoot(t)
	outside := filepath.Join(t.TempDir(), "host-cache")
	if err := os.WriteFile(outside, []byte("host"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(root, "etc/ld.so.cache")); err != nil {
		t.Fatal(err)
	}
	if code, stderr := runHook(t, root, "update-ldcache", "--folder", "/opt/nv"); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if b, _ := os.ReadFile(outside); string(b) != "host" {
		t.Fatalf("file outside the root was changed: %q", b)
	}
	if len(findInCache(t, root, "libnvtest.so.1")) != 1 {
		t.Fatal("cache inside the root not written")
	}
}

func TestExitStatus(t *testing.T) {
	root := libRoot(t)
	tests := []struct {
		name string
		args []string
		code int
		msg  string
	}{
		{"unknown hook", []string{"update-application-profile"}, 0, "unknown hook"},
		{"unknown flag", []string{"update-ldcache", "--folder", "/opt/nv", "--new-flag", "x"}, 0, "unknown flag: --new-flag"},
		{"unknown global flag", []string{"--trace", "update-ldcache"}, 0, "unknown flag: --trace"},
		{"help", []string{"update-ldcache", "--help"}, 0, "--folder"},
		{"noop", []string{"noop"}, 0, ""},
		{"stray argument", []string{"update-ldcache", "/opt/nv"}, 0, "unexpected arguments"},
		{"no command", nil, 1, "usage:"},
		{"missing value", []string{"update-ldcache", "--folder"}, 1, "flag needs an argument"},
		{"bad link", []string{"create-symlinks", "--link", "libcuda.so.1"}, 1, `parsing --link "libcuda.so.1"`},
		{"relative link", []string{"create-symlinks", "--link", "a::b"}, 1, "want TARGET::/ABSOLUTE/LINK"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stderr := runHook(t, root, tt.args...)
			if code != tt.code || !strings.Contains(stderr, tt.msg) {
				t.Errorf("exit %d, stderr %q; want exit %d and %q", code, stderr, tt.code, tt.msg)
			}
		})
	}
	// None of the runs above may have written a cache.
	if _, err := os.Lstat(filepath.Join(root, "etc/ld.so.cache")); !os.IsNotExist(err) {
		t.Errorf("a hook that should not have run wrote ld.so.cache (%v)", err)
	}
}

func TestDebugEnv(t *testing.T) {
	root := libRoot(t)
	var stderr bytes.Buffer
	state := `{"bundle":"/x","root":"` + root + `"}`
	for _, env := range []string{"false", "true"} {
		stderr.Reset()
		if code := run([]string{"update-ldcache", "--folder", "/opt/nv"}, strings.NewReader(state), &stderr, env); code != 0 {
			t.Fatalf("NVIDIA_CTK_DEBUG=%s: exit %d: %s", env, code, stderr.String())
		}
		if got, want := strings.Contains(stderr.String(), "level=DEBUG"), env == "true"; got != want {
			t.Errorf("NVIDIA_CTK_DEBUG=%s: debug output %v, want %v: %q", env, got, want, stderr.String())
		}
	}
}
