package rootfs

import (
	"errors"
	"fmt"
	"testing"

	"github.com/go-nvc/nvc/internal/testutil"
	"github.com/go-nvc/nvc/internal/undo"
)

var errInjected = errors.New("injected fault")

// TestUndoAfterFailedFollowUp: whatever system call fails right after a
// creation (the open, fstat or chown of a directory just made by mkdirat,
// of a file made by openat O_CREAT, of a node or a link; EMFILE or EPERM
// in real life), undo takes back everything made, the entry itself
// included, and reports nothing left.
func TestUndoAfterFailedFollowUp(t *testing.T) {
	testutil.RequireRoot(t)
	kinds := map[string]func(r *Root) error{
		"mkdir":   func(r *Root) error { return closeEntry(r.MkdirAll("a/b/c", 0o755)) },
		"file":    func(r *Root) error { return closeEntry(r.CreateFile("d/e/libcuda.so.1", 0o644)) },
		"node":    func(r *Root) error { return closeEntry(r.Mknod("dev/x/nvidia0", 0o666, 195, 0)) },
		"symlink": func(r *Root) error { return closeEntry(r.Symlink("libcuda.so.1", "f/g/libcuda.so")) },
	}
	for name, mk := range kinds {
		for _, op := range []string{"openat", "fstat", "chown"} {
			for k := 0; ; k++ {
				if !failedFollowUp(t, fmt.Sprintf("%s/%s#%d", name, op, k), mk, op, k) {
					break
				}
			}
		}
	}
}

// failedFollowUp fails the k-th call of op while mk runs on a fresh tree
// and checks undo; it reports whether the fault was hit.
func failedFollowUp(t *testing.T, what string, mk func(*Root) error, op string, k int) bool {
	t.Helper()
	rootfs := testutil.Tree(t, existingSpec)
	before := layout(t, rootfs)
	var u undo.Stack
	n := 0
	fault := func(o, _ string) error {
		if o != op {
			return nil
		}
		n++
		if n-1 == k {
			return errInjected
		}
		return nil
	}
	r := openRoot(t, rootfs, &Options{Owner: &Owner{1000, 1000}, Undo: &u, fault: fault})
	err := mk(r)
	if n <= k {
		if err != nil {
			t.Errorf("%s: no fault, but %v", what, err)
		}
		u.Undo()
		return false
	}
	if !errors.Is(err, errInjected) {
		t.Errorf("%s: error %v, want the injected fault", what, err)
	}
	if err := u.Undo(); err != nil {
		t.Errorf("%s: undo: %v", what, err)
	}
	if after := layout(t, rootfs); after != before {
		t.Errorf("%s: undo left:\nbefore:\n%s\nafter:\n%s", what, before, after)
	}
	return true
}
