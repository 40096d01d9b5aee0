package rootfs

import (
	"errors"
	"fmt"
	"os"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-nvc/nvc/internal/testutil"
	"github.com/go-nvc/nvc/internal/undo"
)

// relinkSpec is a library dir as an image may ship it: a stale SONAME
// link, one pointing at the host, one already right, a file and a
// directory where links would go.
const relinkSpec = `
dir     usr/lib
symlink usr/lib/libcuda.so.1 libcuda.so.535.104.05
symlink usr/lib/libhost.so.1 {{HOST}}/lib/libc.so.6
symlink usr/lib/libright.so.1 libright.so.550
file    usr/lib/libfile.so.1 "image library"
dir     usr/lib/libdir.so.1
`

func TestReplaceSymlink(t *testing.T) {
	testutil.RequireRoot(t)
	for _, tc := range []struct {
		link, target string
		wantErr      error
		replaced     bool // an existing link is exchanged
	}{
		{link: "usr/lib/libnew.so.1", target: "libnew.so.550"},
		{link: "usr/lib/libcuda.so.1", target: "libcuda.so.550.54.15", replaced: true},
		{link: "usr/lib/libhost.so.1", target: "libhost.so.550", replaced: true},
		{link: "usr/lib/libright.so.1", target: "libright.so.550"},
		{link: "usr/lib/libfile.so.1", target: "libfile.so.550", wantErr: ErrWrongType},
		{link: "usr/lib/libdir.so.1", target: "libdir.so.550", wantErr: ErrWrongType},
		{link: "usr/new/libnew.so.1", target: "libnew.so.550"},
	} {
		t.Run(tc.link, func(t *testing.T) { testReplaceSymlink(t, tc.link, tc.target, tc.wantErr, tc.replaced) })
	}
}

func testReplaceSymlink(t *testing.T, link, target string, wantErr error, replaced bool) {
	host := newSentinel(t)
	rootfs := testutil.Tree(t, host.expand(relinkSpec))
	before := layout(t, rootfs)
	oldIno := inode(t, in(rootfs, link))
	var u undo.Stack
	r := openRoot(t, rootfs, &Options{Owner: &Owner{UID: 1000, GID: 1001}, Undo: &u})
	e, err := r.ReplaceSymlink(target, link)
	if wantErr != nil {
		require.ErrorIs(t, err, wantErr, "ReplaceSymlink")
		assert.Equal(t, before, layout(t, rootfs), "a refused ReplaceSymlink changed the rootfs")
		return
	}
	require.NoError(t, err)
	e.Close()
	checkLink(t, in(rootfs, link), target)
	if replaced && e.Created() {
		fi := lstat(t, in(rootfs, link))
		assert.Equal(t, uint32(1000), fi.Sys().(*syscall.Stat_t).Uid, "the new link's owner")
	}
	mustUndo(t, &u)
	assert.Equal(t, before, layout(t, rootfs), "undo did not restore the rootfs")
	if replaced {
		assert.Equal(t, oldIno, inode(t, in(rootfs, link)), "undo put another inode back, not the image's own link")
	}
}

// TestReplaceSymlinkKept: once the change is kept (the undo stack
// discarded, or no stack), the old link is gone and nothing hidden is
// left behind.
func TestReplaceSymlinkKept(t *testing.T) {
	testutil.RequireRoot(t)
	for _, withUndo := range []bool{false, true} {
		t.Run(map[bool]string{false: "no undo stack", true: "undo stack discarded"}[withUndo], func(t *testing.T) {
			rootfs := testutil.Tree(t, "symlink usr/lib/libcuda.so.1 libcuda.so.535.104.05")
			var u undo.Stack
			opts := &Options{}
			if withUndo {
				opts.Undo = &u
			}
			r := openRoot(t, rootfs, opts)
			must(t, closeEntry(r.ReplaceSymlink("libcuda.so.550.54.15", "usr/lib/libcuda.so.1")))
			u.Discard()
			checkLink(t, in(rootfs, "usr/lib/libcuda.so.1"), "libcuda.so.550.54.15")
			assert.Equal(t, []string{"libcuda.so.1"}, entries(t, in(rootfs, "usr/lib")), "undo stack %v: usr/lib, want only the link", withUndo)
		})
	}
}

// TestReplaceSymlinkRace swaps a regular file in and out of the link's
// place while ReplaceSymlink runs: each call either replaces a symlink or
// refuses the file, and the file is never replaced or lost.
func TestReplaceSymlinkRace(t *testing.T) {
	testutil.RequireRoot(t)
	rootfs := testutil.Tree(t, "symlink lib/l old\nfile lib/l.swap \"image library\"")
	fileIno := inode(t, in(rootfs, "lib/l.swap"))
	r := openRoot(t, rootfs, nil)
	d := openPath(t, in(rootfs, "lib"))
	var stop atomic.Bool
	var swaps atomic.Int64
	done := make(chan struct{})
	go func() { swapper(t, d, "l", "l.swap", &stop, &swaps); close(done) }()
	var replacedN, refused int
	for i := range 2000 {
		err := closeEntry(r.ReplaceSymlink(fmt.Sprintf("t%d", i), "lib/l"))
		switch {
		case err == nil:
			replacedN++
		case errors.Is(err, ErrWrongType):
			refused++
		default:
			require.NoError(t, err, "call %d", i)
		}
	}
	stop.Store(true)
	<-done
	t.Logf("%d replaced, %d refused, %d swaps", replacedN, refused, swaps.Load())
	found := false
	for _, n := range entries(t, in(rootfs, "lib")) {
		p := in(rootfs, "lib/"+n)
		if fi := lstat(t, p); fi.Mode().IsRegular() {
			found = inode(t, p) == fileIno
			wantContent(t, p, "image library")
		}
	}
	assert.True(t, found, "the image's file was replaced")
	got := entries(t, in(rootfs, "lib"))
	assert.Len(t, got, 2, "lib holds %q, want the link and the file", got)
}

func checkLink(t *testing.T, p, want string) {
	t.Helper()
	got, err := os.Readlink(p)
	if assert.NoError(t, err, "%s", p) {
		assert.Equal(t, want, got, "%s ->", p)
	}
}

func inode(t *testing.T, p string) uint64 {
	t.Helper()
	fi, err := os.Lstat(p)
	if err != nil {
		return 0
	}
	return fi.Sys().(*syscall.Stat_t).Ino
}
