package mount

import (
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/go-nvc/nvc/internal/testutil"
	"github.com/go-nvc/nvc/internal/testutil/container"
)

// TestOpenTreeAttr: a source cloned with its attributes in one
// open_tree_attr, and one cloned where the kernel lacks that call
// (open_tree and mount_setattr, on a kernel from 5.12 to 6.14), is
// mounted with the same options, directory and file, path and descriptor.
func TestOpenTreeAttr(t *testing.T) {
	t.Run("open_tree_attr", func(t *testing.T) { treeAttr(t, false) })
	t.Run("without", func(t *testing.T) { treeAttr(t, true) })
}

func treeAttr(t *testing.T, deny bool) {
	if !deny {
		testutil.RequireKernel(t, "open_tree_attr (Linux 6.15)", probeTreeAttr())
	}
	host := hostTree(t)
	if !container.InChild(t) {
		return
	}
	if deny {
		require.NoError(t, container.DenySyscalls(unix.SYS_OPEN_TREE_ATTR))
	}
	c := startCtr(t, &container.Options{Spec: "dir " + maskTarget})
	src := openSource(t, host+"/"+libTarget, ReadOnly|NoSuid|NoDev, NewAPI)
	m, err := c.attach(t, src, libTarget)
	require.NoError(t, err)
	m.AddUndo(&c.undo, c.ns)
	wantOptions(t, c.options(t, libTarget), "ro", "nosuid", "nodev")

	fd, err := unix.Open(host+"/"+maskTarget, unix.O_PATH|unix.O_CLOEXEC, 0)
	require.NoError(t, err)
	defer unix.Close(fd)
	dir, err := OpenSourceFd(fd, maskTarget, ReadOnly|NoExec, &Options{Method: NewAPI})
	require.NoError(t, err)
	defer dir.Close()
	m, err = c.attach(t, dir, maskTarget)
	require.NoError(t, err)
	m.AddUndo(&c.undo, c.ns)
	wantOptions(t, c.options(t, maskTarget), "ro", "noexec")
	require.Equal(t, deny, noTreeAttr.Load(), "open_tree_attr was given up")
	require.NoError(t, c.undo.Undo())
}

// probeTreeAttr calls open_tree_attr with no path: a kernel that has the
// call refuses the arguments (EBADF, EFAULT), one without it answers ENOSYS.
func probeTreeAttr() error {
	_, _, errno := unix.Syscall6(unix.SYS_OPEN_TREE_ATTR, ^uintptr(0), 0, 0, 0, 0, 0) // dirfd -1
	if errno == unix.ENOSYS {
		return errno
	}
	return nil
}
