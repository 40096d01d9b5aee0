//go:build !cgo

package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

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
	require.NoError(t, elfwriter.WriteFile(filepath.Join(root, "opt/nv/libnvtest.so.1"), elfwriter.Library("libnvtest.so.1"), 0o644))
	return root
}

func findInCache(t *testing.T, root, soname string) []ldcache.Entry {
	t.Helper()
	c, err := ldcache.OpenInRoot(root, "/etc/ld.so.cache")
	require.NoError(t, err)
	return c.Find(soname, ldcache.ArchX8664)
}

// The flags reach cdihook.UpdateLDCache (tested there); --ldconfig-path
// is accepted and ignored.
func TestUpdateLDCache(t *testing.T) {
	root := libRoot(t)
	code, stderr := runHook(t, root, "update-ldcache", "--folder", "/opt/nv", "--ldconfig-path", "/sbin/ldconfig")
	require.Equal(t, 0, code, "exit status: %s", stderr)
	got := findInCache(t, root, "libnvtest.so.1")
	require.Len(t, got, 1, "cache entries for libnvtest.so.1, want one at /opt/nv/libnvtest.so.1")
	require.Equal(t, "/opt/nv/libnvtest.so.1", got[0].Path, "cache entries for libnvtest.so.1")
}

func TestExitStatus(t *testing.T) {
	root := libRoot(t)
	tests := []struct {
		name string
		args []string
		code int
		msg  string
	}{
		{"unknown hook", []string{"hook-from-the-future"}, 0, "unknown hook"},
		{"unknown flag", []string{"update-ldcache", "--folder", "/opt/nv", "--new-flag", "x"}, 0, "unknown flag: --new-flag"},
		{"unknown global flag", []string{"--trace", "update-ldcache"}, 0, "unknown flag: --trace"},
		{"help", []string{"update-ldcache", "--help"}, 0, "--folder"},
		{"noop", []string{"noop"}, 0, ""},
		{"stray argument", []string{"update-ldcache", "/opt/nv"}, 0, "unexpected arguments"},
		{"no command", nil, 1, "usage:"},
		{"missing value", []string{"update-ldcache", "--folder"}, 1, "flag needs an argument"},
		{"bad link", []string{"create-symlinks", "--link", "libcuda.so.1"}, 1, `parsing link "libcuda.so.1"`},
		{"relative link", []string{"create-symlinks", "--link", "a::b"}, 1, "want TARGET::/ABSOLUTE/LINK"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stderr := runHook(t, root, tt.args...)
			assert.Equal(t, tt.code, code, "exit status, stderr %q", stderr)
			assert.Contains(t, stderr, tt.msg)
		})
	}
	// None of the runs above may have written a cache.
	_, err := os.Lstat(filepath.Join(root, "etc/ld.so.cache"))
	assert.ErrorIs(t, err, os.ErrNotExist, "a hook that should not have run wrote ld.so.cache")
}

func TestDebugEnv(t *testing.T) {
	root := libRoot(t)
	var stderr bytes.Buffer
	state := `{"bundle":"/x","root":"` + root + `"}`
	for _, env := range []string{"false", "true"} {
		stderr.Reset()
		code := run([]string{"update-ldcache", "--folder", "/opt/nv"}, strings.NewReader(state), &stderr, env)
		require.Equal(t, 0, code, "NVIDIA_CTK_DEBUG=%s: exit status: %s", env, stderr.String())
		assert.Equal(t, env == "true", strings.Contains(stderr.String(), "level=DEBUG"), "NVIDIA_CTK_DEBUG=%s: debug output: %q", env, stderr.String())
	}
}
