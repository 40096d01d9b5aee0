package rootfs_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/go-nvc/nvc/internal/rootfs"
	"github.com/go-nvc/nvc/internal/undo"
)

// Create a mount placeholder inside an image whose /usr/lib64 points at
// the host's /usr/lib64: the file lands inside the rootfs, and undo takes
// it back.
func Example() {
	dir, _ := os.MkdirTemp("", "rootfs")
	defer os.RemoveAll(dir)
	os.MkdirAll(filepath.Join(dir, "usr/lib/x86_64-linux-gnu"), 0o755)
	os.Symlink("/usr/lib/x86_64-linux-gnu", filepath.Join(dir, "usr/lib64"))

	var u undo.Stack
	root, err := rootfs.Open(dir, &rootfs.Options{Undo: &u})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer root.Close()
	e, err := root.CreateFile("usr/lib64/libcuda.so.1", 0o644)
	if err != nil {
		fmt.Println(err)
		return
	}
	e.Close()
	_, err = os.Stat(filepath.Join(dir, "usr/lib/x86_64-linux-gnu/libcuda.so.1"))
	fmt.Println("created inside the rootfs:", err == nil)

	// A symlink where a file should be is refused, never followed.
	os.Symlink("/etc/shadow", filepath.Join(dir, "usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1"))
	_, err = root.CreateFile("usr/lib64/libnvidia-ml.so.1", 0o644)
	fmt.Println(errors.Is(err, rootfs.ErrWrongType))

	fmt.Println(u.Undo(), u.Len())
	// Output:
	// created inside the rootfs: true
	// true
	// <nil> 0
}
