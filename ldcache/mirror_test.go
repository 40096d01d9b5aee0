package ldcache_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-nvc/nvc/internal/testutil"
	"github.com/go-nvc/nvc/ldcache"
)

// hostLibDirs are the host directories a mirror root reproduces.
var hostLibDirs = []string{
	"usr/lib/x86_64-linux-gnu", "usr/lib32", "usr/libx32", "usr/lib64", "usr/lib",
	"usr/local/lib", "usr/local/lib/x86_64-linux-gnu", "usr/lib/x86_64-linux-gnu/libfakeroot",
}

// mirrorDir returns a new directory on the filesystem of /usr, where
// files can be hard-linked instead of copied.
func mirrorDir(tb testing.TB) string {
	tb.Helper()
	for _, base := range []string{"/var/tmp", "/usr/local", os.TempDir()} {
		d, err := os.MkdirTemp(base, "nvc-mirror-")
		if err != nil {
			continue
		}
		tb.Cleanup(func() { os.RemoveAll(d) })
		if err := os.Link("/usr/bin/env", filepath.Join(d, "probe")); err == nil {
			os.Remove(filepath.Join(d, "probe"))
			return d
		}
	}
	testutil.Unavailable(tb, "no writable directory on the filesystem of /usr for hard links")
	return ""
}

// hostMirror builds a root holding this host's real libraries (hard
// links), symlinks and ld.so.conf files, laid out as on the host.
func hostMirror(tb testing.TB) string {
	tb.Helper()
	if _, err := os.Stat("/etc/ld.so.conf"); err != nil {
		testutil.Unavailable(tb, "no host ld.so.conf: %v", err)
	}
	root := mirrorDir(tb)
	mirrorInto(tb, root, os.Link)
	return root
}

// mirrorInto reproduces this host's libraries in root, each regular file
// put there by place(src, dst).
func mirrorInto(tb testing.TB, root string, place func(src, dst string) error) {
	tb.Helper()
	testutil.BuildTree(tb, root, "file etc/debian_version \"12\\n\"\nsymlink lib usr/lib\nsymlink lib32 usr/lib32\nsymlink lib64 usr/lib64\nsymlink libx32 usr/libx32\n")
	copyConf(tb, root)
	for _, d := range hostLibDirs {
		mirrorLibDir(tb, root, d, place)
	}
}

// tmpfsMirror is hostMirror on a tmpfs of its own: the libraries copied
// (files whose names no loader cache looks at are left empty).
func tmpfsMirror(tb testing.TB) string {
	tb.Helper()
	testutil.RequireRoot(tb)
	root := tb.TempDir()
	if err := unix.Mount("tmpfs", root, "tmpfs", 0, "mode=0755"); err != nil {
		testutil.RequireKernel(tb, "tmpfs", err)
	}
	tb.Cleanup(func() { unix.Unmount(root, unix.MNT_DETACH) })
	mirrorInto(tb, root, func(src, dst string) error {
		if !strings.Contains(filepath.Base(src), ".so") {
			return os.WriteFile(dst, nil, 0o644)
		}
		return copyFile(src, dst)
	})
	return root
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	_, err = io.Copy(out, in)
	return errors.Join(err, out.Close())
}

func copyConf(tb testing.TB, root string) {
	tb.Helper()
	files, _ := filepath.Glob("/etc/ld.so.conf.d/*")
	for _, f := range append(files, "/etc/ld.so.conf") {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		dst := filepath.Join(root, f)
		os.MkdirAll(filepath.Dir(dst), 0o755)
		if err := os.WriteFile(dst, b, 0o644); err != nil {
			tb.Fatal(err)
		}
	}
}

// mirrorLibDir reproduces the entries of one directory: files by place
// (hard links for hostMirror), symlinks as symlinks, glibc-hwcaps recursively, other
// subdirectories empty.
func mirrorLibDir(tb testing.TB, root, dir string, place func(src, dst string) error) {
	tb.Helper()
	ents, err := os.ReadDir("/" + dir)
	if err != nil {
		return
	}
	if err := os.MkdirAll(filepath.Join(root, dir), 0o755); err != nil {
		tb.Fatal(err)
	}
	for _, e := range ents {
		src, dst := filepath.Join("/", dir, e.Name()), filepath.Join(root, dir, e.Name())
		switch {
		case e.Type()&os.ModeSymlink != 0:
			t, _ := os.Readlink(src)
			os.Symlink(t, dst)
		case e.IsDir() && (e.Name() == "glibc-hwcaps" || strings.Contains(dir, "glibc-hwcaps")):
			mirrorLibDir(tb, root, filepath.Join(dir, e.Name()), place)
		case e.IsDir():
			os.Mkdir(dst, 0o755)
		case e.Type().IsRegular():
			if err := place(src, dst); err != nil {
				tb.Fatalf("mirroring %s: %v", src, err)
			}
		}
	}
}

// TestHostMirrorLikeLdconfig: over this host's real libraries (shared
// objects from gcc, binutils and the distribution, with their real
// layouts: dynamic sections far from the headers, PT_INTERP in libc,
// 32-bit and x32 libraries) Build writes the bytes glibc writes.
func TestHostMirrorLikeLdconfig(t *testing.T) {
	root := hostMirror(t)
	want, glibc := glibcWrites(t, root)
	require.GreaterOrEqual(t, len(glibc.Entries), 50, "glibc listed too few libraries; the mirror tests little")
	c, err := ldcache.Build(context.Background(), root, &ldcache.BuildOptions{Generator: glibc.Generator, NoLinks: true})
	require.NoError(t, err, "Build")
	got, _ := c.MarshalBinary()
	if !bytes.Equal(got, want) {
		var buf bytes.Buffer
		c.Print(&buf, "ours")
		assert.Fail(t, "cache over the host mirror differs from glibc's", "%d vs %d entries:\n%s", len(c.Entries), len(glibc.Entries), buf.String())
	}
	t.Logf("%d libraries", len(c.Entries))
}
