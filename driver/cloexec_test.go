package driver

import (
	"testing"

	"golang.org/x/sys/unix"

	"github.com/go-nvc/nvc/internal/testutil"
)

// TestEmulatedOpenCloexec: descriptors the emulated in-root open returns
// (kernels without openat2) carry FD_CLOEXEC, for O_PATH handles and
// reopened files alike, so none leaks into a process forked meanwhile.
func TestEmulatedOpenCloexec(t *testing.T) {
	root := testutil.Tree(t, "dir usr/lib\nsymlink lib usr/lib\n")
	r, err := openRoot(root)
	if err != nil {
		t.Fatal(err)
	}
	defer r.close()
	r.noOpenat2 = true
	for _, flags := range []int{unix.O_PATH, unix.O_RDONLY | unix.O_DIRECTORY} {
		fd, err := r.openat("/lib", flags)
		if err != nil {
			t.Fatalf("openat(flags %#x): %v", flags, err)
		}
		fdflags, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0)
		unix.Close(fd)
		if err != nil || fdflags&unix.FD_CLOEXEC == 0 {
			t.Errorf("openat(flags %#x): F_GETFD %#x, %v; want FD_CLOEXEC", flags, fdflags, err)
		}
	}
}
