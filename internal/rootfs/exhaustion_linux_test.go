package rootfs

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"

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
				hit := false
				t.Run(fmt.Sprintf("%s/%s/%d", name, op, k), func(t *testing.T) {
					hit = failedFollowUp(t, mk, op, k)
				})
				if !hit {
					break
				}
			}
		}
	}
}

// failedFollowUp fails the k-th call of op while mk runs on a fresh tree
// and checks undo; it reports whether the fault was hit.
func failedFollowUp(t *testing.T, mk func(*Root) error, op string, k int) bool {
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
		assert.NoError(t, err, "no fault, but an error")
		u.Undo()
		return false
	}
	assert.ErrorIs(t, err, errInjected, "want the injected fault")
	assert.NoError(t, u.Undo(), "undo")
	assert.Equal(t, before, layout(t, rootfs), "undo left")
	return true
}
