package mount_test

import (
	"fmt"

	"github.com/go-nvc/nvc/internal/mount"
	"github.com/go-nvc/nvc/internal/ns"
	"github.com/go-nvc/nvc/internal/rootfs"
)

// Bind a host library read-only into the container whose process is PID
// 4242 and whose rootfs is /run/ctr/rootfs; the example only compiles.
func Example() {
	// On the host: open the source and prepare the detached mount.
	src, err := mount.OpenSource("/usr/lib/x86_64-linux-gnu/libcuda.so.550.54.15",
		mount.ReadOnly|mount.NoSuid|mount.NoDev, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer src.Close()
	target, err := ns.OpenPID("/proc", 4242)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer target.Close()
	// In the container's namespace: resolve the target inside the rootfs
	// and move the mount there.
	err = target.Run(func() error {
		root, err := rootfs.Open("/run/ctr/rootfs", nil)
		if err != nil {
			return err
		}
		defer root.Close()
		e, err := root.CreateFile("usr/lib/x86_64-linux-gnu/libcuda.so.550.54.15", 0o644)
		if err != nil {
			return err
		}
		defer e.Close()
		m, err := src.Attach(e.Dir(), e.Name())
		if err != nil {
			return err
		}
		return m.Close() // the mount stays; Detach would take it back
	})
	fmt.Println(err)
}
