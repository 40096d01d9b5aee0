package rootfs

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-nvc/nvc/internal/testutil"
	"github.com/go-nvc/nvc/internal/testutil/container"
	"github.com/go-nvc/nvc/internal/undo"
)

// layout is the tree at root without times (container.Layout).
func layout(t *testing.T, root string) string {
	t.Helper()
	return container.Layout(t, root)
}

const existingSpec = `
dir  usr/lib 0700
file usr/lib/libexisting.so "image"
file etc/ld.so.cache "image cache"
char dev/null 1 3
`

func TestUndoRestoresLayout(t *testing.T) {
	testutil.RequireRoot(t)
	t.Run("fresh dirs", func(t *testing.T) { undoRestoresLayout(t, false) })
	t.Run("kept dirs", func(t *testing.T) { undoRestoresLayout(t, true) })
}

func undoRestoresLayout(t *testing.T, keep bool) {
	rootfs := testutil.Tree(t, existingSpec)
	before := layout(t, rootfs)
	var u undo.Stack
	r := openRoot(t, rootfs, &Options{Owner: &Owner{1, 2}, Undo: &u, KeepDirs: keep})
	for _, e := range creations(t, r, 0o077) {
		e.Close()
	}
	// existing file: accepted, not recorded
	require.NoError(t, closeEntry(r.CreateFile("usr/lib/libexisting.so", 0o644)))
	require.NotEqual(t, before, layout(t, rootfs), "creations changed nothing")
	mustUndo(t, &u)
	assert.Equal(t, before, layout(t, rootfs), "undo did not restore the layout")
}

func TestUndoLeavesWhatChanged(t *testing.T) {
	testutil.RequireRoot(t)
	rootfs := t.TempDir()
	var u undo.Stack
	r := openRoot(t, rootfs, &Options{Undo: &u})
	for _, e := range creations(t, r, 0o077) {
		e.Close()
	}
	// The container (or anyone) changes what we created.
	mustWrite(t, in(rootfs, "d/libcuda.so.1"), "now has content")
	mustWrite(t, in(rootfs, "a/b/c/added"), "x")
	must(t, os.Remove(in(rootfs, "d/libcuda.so")))
	must(t, os.Symlink("elsewhere", in(rootfs, "d/libcuda.so")))
	must(t, os.Remove(in(rootfs, "dev/nvidiactl")))
	mustWrite(t, in(rootfs, "dev/nvidiactl"), "")
	err := u.Undo()
	for _, p := range []string{"d/libcuda.so.1", "a/b/c/added", "d/libcuda.so", "dev/nvidiactl"} {
		assert.True(t, exists(in(rootfs, p)), "undo removed %s, which was no longer what it created", p)
	}
	// Undo says what it left: each changed entry, and each directory
	// that still holds something.
	require.ErrorIs(t, err, ErrLeftBehind, "undo")
	require.True(t, onlyLeftBehind(err), "undo = %v, want only ErrLeftBehind errors", err)
	for _, p := range []string{`"d/libcuda.so.1"`, `"d/libcuda.so"`, `"dev/nvidiactl"`, `"a/b/c"`, `"/a/b"`, `"/a"`, `"/d"`, `"/dev"`} {
		assert.ErrorContains(t, err, "left behind: "+p+":", "undo error does not name %s", p)
	}
	assert.False(t, exists(in(rootfs, "etc")), "undo left etc/, which only held the file it wrote")
}

func TestWriteFileUndoRestoresPrevious(t *testing.T) {
	rootfs := testutil.Tree(t, existingSpec)
	var u undo.Stack
	r := openRoot(t, rootfs, &Options{Undo: &u})
	require.NoError(t, r.WriteFile("etc/ld.so.cache", []byte("ours"), 0o644))
	wantContent(t, in(rootfs, "etc/ld.so.cache"), "ours")
	assert.Len(t, entries(t, in(rootfs, "etc")), 2, "etc entries, want the cache and the kept previous one")
	mustUndo(t, &u)
	wantContent(t, in(rootfs, "etc/ld.so.cache"), "image cache")
	assert.Len(t, entries(t, in(rootfs, "etc")), 1, "etc after undo, want only ld.so.cache")
	// Kept: the previous file is dropped when the stack is discarded.
	require.NoError(t, r.WriteFile("etc/ld.so.cache", []byte("ours"), 0o644))
	u.Discard()
	wantContent(t, in(rootfs, "etc/ld.so.cache"), "ours")
	assert.Len(t, entries(t, in(rootfs, "etc")), 1, "etc after discard, want only ld.so.cache")
}

func TestWriteFileWithoutUndoLeavesNoTemp(t *testing.T) {
	rootfs := testutil.Tree(t, existingSpec)
	r := openRoot(t, rootfs, nil)
	require.NoError(t, r.WriteFile("etc/ld.so.cache", []byte("ours"), 0o644))
	assert.Equal(t, []string{"ld.so.cache"}, entries(t, in(rootfs, "etc")), "etc, want only ld.so.cache")
}

func entries(t *testing.T, dir string) []string {
	t.Helper()
	des, err := os.ReadDir(dir)
	must(t, err)
	var names []string
	for _, de := range des {
		names = append(names, de.Name())
	}
	return names
}

func wantContent(t *testing.T, p, want string) {
	t.Helper()
	data, err := os.ReadFile(p)
	if assert.NoError(t, err, "%s", p) {
		assert.Equal(t, want, string(data), "%s holds", p)
	}
}

func mustWrite(t *testing.T, p, data string) {
	t.Helper()
	must(t, os.WriteFile(p, []byte(data), 0o644))
}

func must(t *testing.T, err error) {
	t.Helper()
	require.NoError(t, err)
}

// TestConcurrentCreationUndo: goroutines creating entries below shared new
// directories through one Root (as Apply's workers do) record every
// directory before anything inside it, so undo restores the layout.
func TestConcurrentCreationUndo(t *testing.T) {
	testutil.RequireRoot(t)
	for _, keep := range []bool{false, true} {
		t.Run(map[bool]string{false: "fresh dirs", true: "kept dirs"}[keep], func(t *testing.T) { concurrentCreationUndo(t, keep) })
	}
}

func concurrentCreationUndo(t *testing.T, keep bool) {
	for round := range 10 {
		rootfs := testutil.Tree(t, existingSpec)
		before := layout(t, rootfs)
		var u undo.Stack
		r := openRoot(t, rootfs, &Options{Undo: &u, KeepDirs: keep})
		var wg sync.WaitGroup
		for g := range 4 {
			wg.Go(func() {
				for i := range 12 {
					dir := fmt.Sprintf("usr/lib/d%d/e%d", i%3, (i+g)%2)
					// assert, not require: this is not the test's goroutine.
					assert.NoError(t, closeEntry(r.CreateFile(fmt.Sprintf("%s/f%d.%d", dir, g, i), 0o644)))
					assert.NoError(t, closeEntry(r.Symlink("x", fmt.Sprintf("%s/l%d.%d", dir, g, i))))
					assert.NoError(t, closeEntry(r.MkdirAll(fmt.Sprintf("%s/m%d/n%d", dir, i%2, g), 0o755)))
				}
			})
		}
		wg.Wait()
		mustUndo(t, &u)
		require.Equal(t, before, layout(t, rootfs), "kept dirs %v, round %d: undo did not restore the layout", keep, round)
	}
}

// onlyLeftBehind reports whether err, an undo.Stack's (errors.Join of its
// steps' errors), is nil or holds only errors that match ErrLeftBehind.
func onlyLeftBehind(err error) bool {
	if err == nil {
		return true
	}
	j, ok := err.(interface{ Unwrap() []error })
	if !ok {
		return false
	}
	for _, e := range j.Unwrap() {
		if !errors.Is(e, ErrLeftBehind) {
			return false
		}
	}
	return true
}
