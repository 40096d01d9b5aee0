package inroot

import (
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/go-nvc/nvc/internal/testutil"
)

// openers are the two resolvers; both must give the same answers.
var openers = map[string]func(dir *os.File, p string, flags int) (int, error){
	"openat2": func(dir *os.File, p string, flags int) (int, error) {
		return Openat2(int(dir.Fd()), p, flags, 0)
	},
	"emulated": Emulated,
}

// requireOpener gates t on the kernel having the resolver name.
func requireOpener(t *testing.T, name string) {
	t.Helper()
	if name == "openat2" && !HaveOpenat2() {
		testutil.RequireKernel(t, "openat2", unix.ENOSYS)
	}
}

// TestStaysInRoot: absolute symlinks, ".." chains and a symlink to ".."
// all resolve inside the root, to the root's own files, for both
// resolvers; the descriptors carry FD_CLOEXEC.
func TestStaysInRoot(t *testing.T) {
	root := t.TempDir()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(root, "etc"), 0o755))
	must(os.WriteFile(filepath.Join(root, "etc/passwd"), []byte("inside\n"), 0o644))
	must(os.Symlink("/etc", filepath.Join(root, "abs")))
	must(os.Symlink("../../../../etc", filepath.Join(root, "etc/up")))
	must(os.Symlink("/proc/self/root/etc", filepath.Join(root, "magic")))
	dir, err := os.Open(root)
	must(err)
	defer dir.Close()
	for name, open := range openers {
		t.Run(name, func(t *testing.T) {
			requireOpener(t, name)
			for _, p := range []string{"/etc/passwd", "/abs/passwd", "../../etc/passwd", "/etc/up/passwd"} {
				fd, err := open(dir, p, unix.O_RDONLY)
				if err != nil {
					t.Fatalf("%s %s: %v", name, p, err)
				}
				f := os.NewFile(uintptr(fd), p)
				buf := make([]byte, 16)
				n, _ := f.Read(buf)
				fdflags, ferr := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0)
				f.Close()
				if string(buf[:n]) != "inside\n" {
					t.Errorf("%s %s: read %q, want the root's own file", name, p, buf[:n])
				}
				if ferr != nil || fdflags&unix.FD_CLOEXEC == 0 {
					t.Errorf("%s %s: F_GETFD %#x, %v; want FD_CLOEXEC", name, p, fdflags, ferr)
				}
			}
			// A path through the magic link never reaches the host's /etc:
			// openat2 refuses it, the emulation resolves it inside the root
			// (where /proc does not exist).
			if fd, err := open(dir, "/magic/passwd", unix.O_RDONLY); err == nil {
				unix.Close(fd)
				t.Errorf("%s /magic/passwd: opened; want an error", name)
			}
		})
	}
}

// TestOpenCloexec: the descriptors Open returns carry FD_CLOEXEC with
// either resolver, for O_PATH handles and reopened directories alike (the
// emulation dups its handles), so none leaks into a process forked
// meanwhile.
func TestOpenCloexec(t *testing.T) {
	root := t.TempDir()
	if err := unix.Mkdir(root+"/etc", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := unix.Symlink("/etc", root+"/link"); err != nil {
		t.Fatal(err)
	}
	dir, err := os.OpenFile(root, unix.O_PATH|unix.O_DIRECTORY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer dir.Close()
	for name, open := range openers {
		t.Run(name, func(t *testing.T) {
			requireOpener(t, name)
			for _, flags := range []int{unix.O_PATH, unix.O_RDONLY | unix.O_DIRECTORY} {
				fd, err := open(dir, "/link", flags)
				if err != nil {
					t.Fatalf("%s(flags %#x): %v", name, flags, err)
				}
				fdflags, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0)
				unix.Close(fd)
				if err != nil || fdflags&unix.FD_CLOEXEC == 0 {
					t.Errorf("%s(flags %#x): F_GETFD %#x, %v; want FD_CLOEXEC", name, flags, fdflags, err)
				}
			}
		})
	}
}

// TestNoFollowLast: with O_NOFOLLOW the last component is not followed by
// either resolver, so O_PATH opens a symlink (dangling or not) itself,
// while symlinks before it are still followed inside the root.
func TestNoFollowLast(t *testing.T) {
	root := testutil.Tree(t, "dir etc\nfile etc/f \"x\"\nsymlink etc/l f\nsymlink etc/dangling /nowhere\nsymlink abs /etc\n")
	dir, err := os.OpenFile(root, unix.O_PATH|unix.O_DIRECTORY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer dir.Close()
	want := map[string]uint32{
		"/etc/l": unix.S_IFLNK, "etc/dangling": unix.S_IFLNK, "/abs/l": unix.S_IFLNK,
		"/abs/f": unix.S_IFREG, "/abs": unix.S_IFLNK, "/abs/": unix.S_IFDIR, "/etc/..": unix.S_IFDIR,
	}
	for name, open := range openers {
		t.Run(name, func(t *testing.T) {
			requireOpener(t, name)
			for p, typ := range want {
				fd, err := open(dir, p, unix.O_PATH|unix.O_NOFOLLOW)
				if err != nil {
					t.Errorf("%s O_NOFOLLOW: %v", p, err)
					continue
				}
				var st unix.Stat_t
				err = unix.Fstat(fd, &st)
				unix.Close(fd)
				if err != nil || st.Mode&unix.S_IFMT != typ {
					t.Errorf("%s O_NOFOLLOW: mode %#o, %v; want type %#o", p, st.Mode, err, typ)
				}
			}
			if fd, err := open(dir, "/etc/l", unix.O_RDONLY|unix.O_NOFOLLOW); err == nil {
				unix.Close(fd)
				t.Errorf("/etc/l O_RDONLY|O_NOFOLLOW: opened; want ELOOP")
			}
		})
	}
}
