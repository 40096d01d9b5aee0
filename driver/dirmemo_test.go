package driver

import (
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-nvc/nvc/internal/testutil"
)

// memoCall is one Files-like pass over root with the shared memo, as if
// the call started at start.
func memoCall(t *testing.T, root string, shared *sync.Map, start time.Time, do func(r *rootDir)) *memos {
	t.Helper()
	r, err := openRoot(root)
	require.NoError(t, err)
	defer r.close()
	r.memo = &memos{shared: shared, start: start}
	do(r)
	r.memo.publish()
	return r.memo
}

func resolvesTo(t *testing.T, r *rootDir, p, want string) {
	t.Helper()
	res, err := r.resolve(p)
	assert.NoError(t, err, "resolve(%s)", p)
	assert.Equal(t, want, res.path, "resolve(%s)", p)
}

func isMissing(t *testing.T, r *rootDir, p string) {
	t.Helper()
	_, err := r.resolve(p)
	assert.ErrorIs(t, err, os.ErrNotExist, "resolve(%s)", p)
}

// TestDirMemo: symlink targets and missing names are kept by directory
// and used while the directory is unchanged; replacing the link or
// creating the missing name changes the directory's ctime, and the next
// call looks again. (start lies two seconds ahead so that the freshly made
// tree counts as old.)
func TestDirMemo(t *testing.T) {
	root := testutil.Tree(t, `
file    lib/libfoo.so.1.0 one
file    lib/libfoo.so.2.0 two
symlink lib/libfoo.so.1 libfoo.so.1.0
`)
	var shared sync.Map
	later := func() time.Time { return time.Now().Add(2 * time.Second) }
	memoCall(t, root, &shared, later(), func(r *rootDir) {
		resolvesTo(t, r, "/lib/libfoo.so.1", "/lib/libfoo.so.1.0")
		isMissing(t, r, "/lib/libnew.so.1")
	})
	v, ok := shared.Load("/lib")
	require.True(t, ok, "no memo kept for /lib")
	m := v.(*dirMemo)
	require.Len(t, m.names, 2, "memo of /lib: %+v", m.names)
	require.Equal(t, "libfoo.so.1.0", m.names["libfoo.so.1"].target, "memo of /lib: %+v", m.names)
	require.True(t, m.names["libnew.so.1"].missing, "memo of /lib: %+v", m.names)
	memoCall(t, root, &shared, later(), func(r *rootDir) {
		d, err := r.dir("/lib")
		require.NoError(t, err)
		e, ok := r.memo.find(d, "libfoo.so.1")
		if assert.True(t, ok, "unchanged dir: memo gives nothing") {
			assert.Equal(t, "libfoo.so.1.0", e.target, "unchanged dir: memo gives %+v", e)
		}
		resolvesTo(t, r, "/lib/libfoo.so.1", "/lib/libfoo.so.1.0")
	})
	dir := filepath.Join(root, "lib")
	require.NoError(t, os.Remove(filepath.Join(dir, "libfoo.so.1")))
	testutil.BuildTree(t, root, "symlink lib/libfoo.so.1 libfoo.so.2.0\nfile lib/libnew.so.1 new\n")
	memoCall(t, root, &shared, later(), func(r *rootDir) {
		resolvesTo(t, r, "/lib/libfoo.so.1", "/lib/libfoo.so.2.0")
		resolvesTo(t, r, "/lib/libnew.so.1", "/lib/libnew.so.1")
	})
}

// TestDirMemoRacy: lookups in a directory changed less than racyWindow
// before the call are not kept.
func TestDirMemoRacy(t *testing.T) {
	root := testutil.Tree(t, "file lib/libfoo.so.1.0 one\nsymlink lib/libfoo.so.1 libfoo.so.1.0\n")
	var shared sync.Map
	memoCall(t, root, &shared, time.Now(), func(r *rootDir) {
		resolvesTo(t, r, "/lib/libfoo.so.1", "/lib/libfoo.so.1.0")
		isMissing(t, r, "/lib/libnew.so.1")
	})
	if v, ok := shared.Load("/lib"); ok {
		assert.Fail(t, "a directory changed just now was memoised", "%+v", v.(*dirMemo).names)
	}
}

// TestDirAliases: a directory reached through a symlinked path and by its
// own path, in either order, is opened once and its lookups are shared.
func TestDirAliases(t *testing.T) {
	root := testutil.Tree(t, `
file    usr/lib/libfoo.so.1.0 one
symlink usr/lib/libfoo.so.1 libfoo.so.1.0
symlink lib usr/lib
`)
	for _, order := range [][2]string{{"/lib", "/usr/lib/"}, {"/usr/lib", "/lib/"}} {
		r, err := openRoot(root)
		require.NoError(t, err)
		a, errA := r.dir(order[0])
		b, errB := r.dir(order[1])
		require.NoError(t, errA, order[0])
		require.NoError(t, errB, order[1])
		assert.Equal(t, a, b, "%s and %s give different directories", order[0], order[1])
		assert.Equal(t, "/usr/lib", a.path, "%s", order[0])
		assert.Len(t, r.dirFDs, 1, "descriptors")
		resolvesTo(t, r, "/lib/libfoo.so.1", "/usr/lib/libfoo.so.1.0")
		assert.Contains(t, r.seen, dirName{a.fd, "libfoo.so.1.0"}, "the link's target was not looked up through the shared descriptor")
		r.close()
	}
}
