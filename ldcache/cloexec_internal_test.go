package ldcache

import (
	"testing"

	"golang.org/x/sys/unix"
)

// TestEmulatedOpenCloexec: descriptors the emulated in-root open returns
// (the kernels without openat2) carry FD_CLOEXEC, for O_PATH handles and
// reopened files alike, so none leaks into a process forked meanwhile.
func TestEmulatedOpenCloexec(t *testing.T) {
	root := t.TempDir()
	if err := unix.Mkdir(root+"/etc", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := unix.Symlink("/etc", root+"/link"); err != nil {
		t.Fatal(err)
	}
	r, err := openRoot(root)
	if err != nil {
		t.Fatal(err)
	}
	defer r.close()
	for _, flags := range []int{unix.O_PATH, unix.O_RDONLY | unix.O_DIRECTORY} {
		fd, err := r.openEmulated("/link", flags)
		if err != nil {
			t.Fatalf("openEmulated(flags %#x): %v", flags, err)
		}
		fdflags, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0)
		unix.Close(fd)
		if err != nil || fdflags&unix.FD_CLOEXEC == 0 {
			t.Errorf("openEmulated(flags %#x): F_GETFD %#x, %v; want FD_CLOEXEC", flags, fdflags, err)
		}
	}
}
