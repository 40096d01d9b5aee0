package rootfs

import (
	"io/fs"
	"os"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-nvc/nvc/internal/testutil"
	"github.com/go-nvc/nvc/internal/undo"
)

// TestLink: Link makes, keeps, refuses and replaces links as Symlink and
// ReplaceSymlink do, gives a new link the Root's owner (then through a
// descriptor), and undo takes back exactly what it made.
func TestLink(t *testing.T) {
	testutil.RequireRoot(t)
	for _, tc := range []struct {
		name  string
		owner *Owner
	}{
		{"no owner", nil},
		{"creator", &Owner{UID: os.Getuid(), GID: os.Getgid()}},
		{"other owner", &Owner{UID: 1234, GID: 4321}},
	} {
		t.Run(tc.name, func(t *testing.T) { link(t, tc.owner) })
	}
}

func link(t *testing.T, o *Owner) {
	rootfs := t.TempDir()
	require.NoError(t, os.MkdirAll(in(rootfs, "lib"), 0o755))
	require.NoError(t, os.Symlink("libcuda.so.1.old", in(rootfs, "lib/libcuda.so.1")))
	require.NoError(t, os.Symlink("elsewhere", in(rootfs, "lib/libGLX_indirect.so.0")))
	require.NoError(t, os.WriteFile(in(rootfs, "lib/libfile.so"), nil, 0o644))
	var u undo.Stack
	r := openRoot(t, rootfs, &Options{Owner: o, Undo: &u, KeepDirs: true})

	require.NoError(t, r.Link("libnvidia-ml.so.1", "lib/deep/libnvidia-ml.so", false), "new link")
	require.NoError(t, r.Link("libnvidia-ml.so.1", "lib/deep/libnvidia-ml.so", false), "the same link again")
	require.NoError(t, r.Link("libcuda.so.550", "lib/libcuda.so.1", true), "replacing a link")
	err := r.Link("libGLX_nvidia.so.0", "lib/libGLX_indirect.so.0", false)
	assert.ErrorIs(t, err, fs.ErrExist, "a link to elsewhere, not replaced")
	err = r.Link("libfile.so.1", "lib/libfile.so", true)
	assert.ErrorIs(t, err, ErrWrongType, "a file where a link goes")

	for p, want := range map[string]string{
		"lib/deep/libnvidia-ml.so": "libnvidia-ml.so.1", "lib/libcuda.so.1": "libcuda.so.550",
		"lib/libGLX_indirect.so.0": "elsewhere",
	} {
		got, err := os.Readlink(in(rootfs, p))
		require.NoError(t, err, p)
		assert.Equal(t, want, got, "%s links to", p)
	}
	if o != nil {
		wantStat(t, in(rootfs, "lib/deep/libnvidia-ml.so"), syscall.S_IFLNK, 0, *o)
		wantStat(t, in(rootfs, "lib/libcuda.so.1"), syscall.S_IFLNK, 0, *o)
	}

	mustUndo(t, &u)
	assert.False(t, exists(in(rootfs, "lib/deep")), "undo left lib/deep")
	got, err := os.Readlink(in(rootfs, "lib/libcuda.so.1"))
	require.NoError(t, err)
	assert.Equal(t, "libcuda.so.1.old", got, "undo put the old link back")
}
