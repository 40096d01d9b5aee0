package rootfs

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/go-nvc/nvc/internal/testutil"
)

// TestMayCreateOncePerDir: with KeepDirs, a directory MayCreate allowed is
// not asked about again for the next entries made in it (one statx less
// per mount in Apply); one it refused is asked again, and still refuses.
func TestMayCreateOncePerDir(t *testing.T) {
	dir := testutil.Tree(t, "dir usr/lib64\ndir vol")
	asked := map[string]int{}
	r := openRoot(t, dir, &Options{KeepDirs: true, MayCreate: func(_ int, d string) error {
		asked[d]++
		if d == "/vol" {
			return errRefused
		}
		return nil
	}})
	for i := range 5 {
		require.NoError(t, closeIt(r.CreateFile(fmt.Sprintf("/usr/lib64/lib%d.so", i), 0o644)))
		require.NoError(t, closeIt(r.Symlink(fmt.Sprintf("lib%d.so", i), fmt.Sprintf("/usr/lib64/link%d", i))))
		assert.ErrorIs(t, closeIt(r.CreateFile(fmt.Sprintf("/vol/f%d", i), 0o644)), errRefused)
	}
	assert.Equal(t, 1, asked["/usr/lib64"], "MayCreate asked about the allowed directory")
	assert.Equal(t, 5, asked["/vol"], "MayCreate asked about the refused directory")
}

// TestEntryMountID: an entry's MountID is the mount its descriptor is on,
// as a statx of the descriptor says.
func TestEntryMountID(t *testing.T) {
	dir := testutil.Tree(t, "file usr/lib64/libc.so.6 x")
	r := openRoot(t, dir, nil)
	e, err := r.CreateFile("/usr/lib64/new.so", 0o644)
	require.NoError(t, err)
	defer e.Close()
	var stx unix.Statx_t
	require.NoError(t, unix.Statx(e.Fd(), "", unix.AT_EMPTY_PATH|unix.AT_SYMLINK_NOFOLLOW, unix.STATX_MNT_ID, &stx))
	if stx.Mask&unix.STATX_MNT_ID == 0 {
		assert.Zero(t, e.MountID(), "a kernel without STATX_MNT_ID")
		return
	}
	assert.Equal(t, stx.Mnt_id, e.MountID())
	var st unix.Stat_t
	require.NoError(t, unix.Fstat(e.Fd(), &st))
	got := e.Stat()
	assert.Equal(t, st.Dev, got.Dev, "dev")
	assert.Equal(t, st.Ino, got.Ino, "ino")
	assert.Equal(t, st.Mode, got.Mode, "mode")
	assert.Equal(t, st.Nlink, got.Nlink, "nlink")
	assert.Equal(t, st.Uid, got.Uid, "uid")
	assert.Equal(t, st.Size, got.Size, "size")
	assert.Equal(t, st.Mtim, got.Mtim, "mtime")
}
