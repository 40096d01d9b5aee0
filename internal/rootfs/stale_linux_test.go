package rootfs

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"golang.org/x/sys/unix"

	"github.com/go-nvc/nvc/internal/testutil"
)

// TestRemoveStaleTemps: with RemoveStaleTemps, WriteFile and
// ReplaceSymlink first remove what an interrupted call left in their
// directory (".NAME.nvc-" and 12 hex digits, files and links), and only
// that: a directory, a FIFO, near-miss names and the image's own files
// stay. The previous entry WriteFile keeps for undo is not swept by a
// later call in the same directory.
func TestRemoveStaleTemps(t *testing.T) {
	testutil.RequireRoot(t)
	rootfs := testutil.Tree(t, `
file    etc/ld.so.cache "image"
file    etc/.ld.so.cache.nvc-0123456789ab "old cache"
symlink etc/.ld.so.cache.nvc-abcdef012345 "x"
dir     etc/.dir.nvc-0123456789ab
file    etc/.ld.so.cache.nvc-0123456789AB "upper hex"
file    etc/.ld.so.cache.nvc-0123456789abc "13 digits"
file    etc/ld.so.cache.nvc-0123456789ab "no dot"
file    etc/passwd "root"
dir     lib
symlink lib/libcuda.so.1 libcuda.so.old
symlink lib/.libcuda.so.1.nvc-00000000beef libcuda.so.old
`)
	must(t, os.MkdirAll(in(rootfs, "etc"), 0o755))
	must(t, mkfifo(in(rootfs, "etc/.fifo.nvc-0123456789ab")))
	r := openRoot(t, rootfs, &Options{RemoveStaleTemps: true})
	must(t, r.WriteFile("etc/ld.so.cache", []byte("new"), 0o644))
	must(t, closeEntry(r.ReplaceSymlink("libcuda.so.550", "lib/libcuda.so.1")))
	got := entries(t, in(rootfs, "etc"))
	want := []string{".dir.nvc-0123456789ab", ".fifo.nvc-0123456789ab", ".ld.so.cache.nvc-0123456789AB",
		".ld.so.cache.nvc-0123456789abc", "ld.so.cache", "ld.so.cache.nvc-0123456789ab", "passwd"}
	assert.Equal(t, want, got, "etc")
	assert.Equal(t, []string{"libcuda.so.1"}, entries(t, in(rootfs, "lib")), "lib, want only libcuda.so.1")
	// Without the option nothing is swept.
	stale := in(rootfs, "etc/.ld.so.cache.nvc-0123456789ab")
	mustWrite(t, stale, "old cache")
	r2 := openRoot(t, rootfs, nil)
	must(t, r2.WriteFile("etc/ld.so.cache", []byte("newer"), 0o644))
	assert.True(t, exists(stale), "a Root without RemoveStaleTemps removed a temporary")
}

func mkfifo(p string) error { return unix.Mkfifo(p, 0o600) }
