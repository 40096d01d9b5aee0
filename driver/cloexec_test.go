package driver

import (
	"testing"

	"golang.org/x/sys/unix"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-nvc/nvc/internal/testutil"
)

// TestEmulatedOpenCloexec: descriptors the emulated in-root open returns
// (kernels without openat2) carry FD_CLOEXEC, for O_PATH handles and
// reopened files alike, so none leaks into a process forked meanwhile.
func TestEmulatedOpenCloexec(t *testing.T) {
	root := testutil.Tree(t, "dir usr/lib\nsymlink lib usr/lib\n")
	r, err := openRoot(root)
	require.NoError(t, err)
	defer r.close()
	r.noOpenat2 = true
	for _, flags := range []int{unix.O_PATH, unix.O_RDONLY | unix.O_DIRECTORY} {
		fd, err := r.openat("/lib", flags)
		require.NoError(t, err, "openat(flags %#x)", flags)
		fdflags, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0)
		unix.Close(fd)
		if assert.NoError(t, err, "openat(flags %#x): F_GETFD", flags) {
			assert.NotZero(t, fdflags&unix.FD_CLOEXEC, "openat(flags %#x): F_GETFD %#x; want FD_CLOEXEC", flags, fdflags)
		}
	}
}
