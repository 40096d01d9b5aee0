package mount

import (
	"errors"
	"os"
	"testing"

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
	if err := container.DenyNewerSyscalls(); err != nil {
		t.Fatal(err)
	}
	if HasNewAPI() {
		t.Fatal("HasNewAPI() = true without mount_setattr")
	}
	if _, err := OpenSource(host+"/"+libTarget, ReadOnly, &Options{Method: NewAPI}); !errors.Is(err, ErrNotSupported) {
		t.Errorf("OpenSource(NewAPI) = %v, want ErrNotSupported", err)
	}
	c := startCtr(t, &container.Options{Spec: "dir " + maskTarget})
	src := openSource(t, host+"/"+libTarget, ReadOnly|NoSuid|NoDev, Auto)
	if src.Method() != Legacy {
		t.Fatalf("Auto chose %v", src.Method())
	}
	m, err := c.attach(t, src, libTarget)
	if err != nil {
		t.Fatal(err)
	}
	m.AddUndo(&c.undo, c.ns)
	wantOptions(t, c.options(t, libTarget), "ro", "nosuid", "nodev")
	oldKernelMask(t, c, host)
	oldKernelNode(t, c)
	if err := c.undo.Undo(); err != nil {
		t.Fatal(err)
	}
	if c.MountAt(t, libTarget) != nil || c.MountAt(t, maskTarget) != nil {
		t.Error("undo left mounts")
	}
}

func oldKernelMask(t *testing.T, c *ctr, host string) {
	t.Helper()
	mask, err := NewTmpfs(&TmpfsOptions{Attr: ReadOnly | NoSuid | NoDev | NoExec}, func(root *os.File) error {
		if err := WriteFileAt(root, "params", []byte(procFiles["params"]), 0o444); err != nil {
			return err
		}
		return MkdirAt(root, "gpus", 0o555)
	})
	if err != nil {
		t.Fatal(err)
	}
	m := attachMask(t, c, mask)
	m.AddUndo(&c.undo, c.ns)
	wantOptions(t, c.options(t, maskTarget), "ro", "nosuid", "nodev", "noexec")
	if data, _ := os.ReadFile(c.Path(maskTarget + "/params")); string(data) != procFiles["params"] {
		t.Errorf("params in the mask = %q", data)
	}
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
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Lstat(c.Path("dev/nvidia-uvm"))
	if err != nil || fi.Mode().Perm() != 0o666 {
		t.Errorf("dev/nvidia-uvm: %v %v, want mode 0666", fi, err)
	}
}
