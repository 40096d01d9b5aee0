package driver

import (
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/go-nvc/nvc/internal/testutil"
)

// memoCall is one Files-like pass over root with the shared memo, as if
// the call started at start.
func memoCall(t *testing.T, root string, shared *sync.Map, start time.Time, do func(r *rootDir)) *memos {
	t.Helper()
	r, err := openRoot(root)
	if err != nil {
		t.Fatal(err)
	}
	defer r.close()
	r.memo = &memos{shared: shared, start: start}
	do(r)
	r.memo.publish()
	return r.memo
}

func resolvesTo(t *testing.T, r *rootDir, p, want string) {
	t.Helper()
	res, err := r.resolve(p)
	if err != nil || res.path != want {
		t.Errorf("resolve(%s) = %q, %v; want %q", p, res.path, err, want)
	}
}

func isMissing(t *testing.T, r *rootDir, p string) {
	t.Helper()
	if _, err := r.resolve(p); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("resolve(%s): %v, want not exist", p, err)
	}
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
	if !ok {
		t.Fatal("no memo kept for /lib")
	}
	if m := v.(*dirMemo); m.names["libfoo.so.1"].target != "libfoo.so.1.0" || !m.names["libnew.so.1"].missing || len(m.names) != 2 {
		t.Fatalf("memo of /lib: %+v", m.names)
	}
	memoCall(t, root, &shared, later(), func(r *rootDir) {
		d, err := r.dir("/lib")
		if err != nil {
			t.Fatal(err)
		}
		if e, ok := r.memo.find(d, "libfoo.so.1"); !ok || e.target != "libfoo.so.1.0" {
			t.Errorf("unchanged dir: memo gives %+v, %v", e, ok)
		}
		resolvesTo(t, r, "/lib/libfoo.so.1", "/lib/libfoo.so.1.0")
	})
	dir := filepath.Join(root, "lib")
	if err := os.Remove(filepath.Join(dir, "libfoo.so.1")); err != nil {
		t.Fatal(err)
	}
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
		t.Errorf("a directory changed just now was memoised: %+v", v.(*dirMemo).names)
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
		if err != nil {
			t.Fatal(err)
		}
		a, errA := r.dir(order[0])
		b, errB := r.dir(order[1])
		if errA != nil || errB != nil {
			t.Fatal(errA, errB)
		}
		if a != b || a.path != "/usr/lib" || len(r.dirFDs) != 1 {
			t.Errorf("%s gives %+v, %s gives %+v, %d descriptors", order[0], a, order[1], b, len(r.dirFDs))
		}
		resolvesTo(t, r, "/lib/libfoo.so.1", "/usr/lib/libfoo.so.1.0")
		if _, ok := r.seen[dirName{a.fd, "libfoo.so.1.0"}]; !ok {
			t.Error("the link's target was not looked up through the shared descriptor")
		}
		r.close()
	}
}
