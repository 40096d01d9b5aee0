package mount

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-nvc/nvc/internal/rootfs"
	"github.com/go-nvc/nvc/internal/testutil/container"
)

// TestOldKernel runs the whole flow on a simulated 4.18 kernel: Auto must
// choose Legacy, NewAPI must refuse, and placeholders, binds, the tmpfs
// mask, detach and undo must work without any of the newer calls.
func TestOldKernel(t *testing.T) {
	host := hostTree(t)
	if !container.InChild(t) {
		return
	}
	require.NoError(t, container.DenyNewerSyscalls())
	require.False(t, HasNewAPI(), "HasNewAPI() = true without mount_setattr")
	_, err := OpenSource(host+"/"+libTarget, ReadOnly, &Options{Method: NewAPI})
	assert.ErrorIs(t, err, ErrNotSupported, "OpenSource(NewAPI)")
	c := startCtr(t, &container.Options{Spec: "dir " + maskTarget})
	src := openSource(t, host+"/"+libTarget, ReadOnly|NoSuid|NoDev, Auto)
	require.Equal(t, Legacy, src.Method(), "Auto chose")
	m, err := c.attach(t, src, libTarget)
	require.NoError(t, err)
	m.AddUndo(&c.undo, c.ns)
	wantOptions(t, c.options(t, libTarget), "ro", "nosuid", "nodev")
	oldKernelMask(t, c, host)
	oldKernelNode(t, c)
	require.NoError(t, c.undo.Undo())
	assert.Nil(t, c.MountAt(t, libTarget), "undo left mounts")
	assert.Nil(t, c.MountAt(t, maskTarget), "undo left mounts")
}

func oldKernelMask(t *testing.T, c *ctr, host string) {
	t.Helper()
	mask, err := NewTmpfs(&TmpfsOptions{Attr: ReadOnly | NoSuid | NoDev | NoExec}, func(root *os.File) error {
		if err := WriteFileAt(root, "params", []byte(procFiles["params"]), 0o444); err != nil {
			return err
		}
		return MkdirAt(root, "gpus", 0o555)
	})
	require.NoError(t, err)
	m := attachMask(t, c, mask)
	m.AddUndo(&c.undo, c.ns)
	wantOptions(t, c.options(t, maskTarget), "ro", "nosuid", "nodev", "noexec")
	data, _ := os.ReadFile(c.Path(maskTarget + "/params"))
	assert.Equal(t, procFiles["params"], string(data), "params in the mask")
}

// oldKernelNode creates a device node, whose mode needs the procfs chmod
// fallback without fchmodat2.
func oldKernelNode(t *testing.T, c *ctr) {
	t.Helper()
	err := c.run(t, func(r *rootfs.Root) error {
		e, err := r.Mknod("dev/nvidia-uvm", 0o666, 511, 0)
		if err == nil {
			e.Close()
		}
		return err
	})
	require.NoError(t, err)
	fi, err := os.Lstat(c.Path("dev/nvidia-uvm"))
	if assert.NoError(t, err, "dev/nvidia-uvm") {
		assert.Equal(t, os.FileMode(0o666), fi.Mode().Perm(), "dev/nvidia-uvm mode")
	}
}
