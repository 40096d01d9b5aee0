package inroot

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
	require.NoError(t, os.MkdirAll(filepath.Join(root, "etc"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(root, "etc/passwd"), []byte("inside\n"), 0o644))
	require.NoError(t, os.Symlink("/etc", filepath.Join(root, "abs")))
	require.NoError(t, os.Symlink("../../../../etc", filepath.Join(root, "etc/up")))
	require.NoError(t, os.Symlink("/proc/self/root/etc", filepath.Join(root, "magic")))
	dir, err := os.Open(root)
	require.NoError(t, err)
	defer dir.Close()
	for name, open := range openers {
		t.Run(name, func(t *testing.T) {
			requireOpener(t, name)
			for _, p := range []string{"/etc/passwd", "/abs/passwd", "../../etc/passwd", "/etc/up/passwd"} {
				fd, err := open(dir, p, unix.O_RDONLY)
				require.NoError(t, err, "%s %s", name, p)
				f := os.NewFile(uintptr(fd), p)
				buf := make([]byte, 16)
				n, _ := f.Read(buf)
				fdflags, ferr := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0)
				f.Close()
				assert.Equal(t, "inside\n", string(buf[:n]), "%s %s: want the root's own file", name, p)
				if assert.NoError(t, ferr, "%s %s: F_GETFD", name, p) {
					assert.NotZero(t, fdflags&unix.FD_CLOEXEC, "%s %s: F_GETFD %#x, want FD_CLOEXEC", name, p, fdflags)
				}
			}
			// A path through the magic link never reaches the host's /etc:
			// openat2 refuses it, the emulation resolves it inside the root
			// (where /proc does not exist).
			fd, err := open(dir, "/magic/passwd", unix.O_RDONLY)
			if !assert.Error(t, err, "%s /magic/passwd: opened; want an error", name) {
				unix.Close(fd)
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
	require.NoError(t, unix.Mkdir(root+"/etc", 0o755))
	require.NoError(t, unix.Symlink("/etc", root+"/link"))
	dir, err := os.OpenFile(root, unix.O_PATH|unix.O_DIRECTORY, 0)
	require.NoError(t, err)
	defer dir.Close()
	for name, open := range openers {
		t.Run(name, func(t *testing.T) {
			requireOpener(t, name)
			for _, flags := range []int{unix.O_PATH, unix.O_RDONLY | unix.O_DIRECTORY} {
				fd, err := open(dir, "/link", flags)
				require.NoError(t, err, "%s(flags %#x)", name, flags)
				fdflags, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0)
				unix.Close(fd)
				if assert.NoError(t, err, "%s(flags %#x): F_GETFD", name, flags) {
					assert.NotZero(t, fdflags&unix.FD_CLOEXEC, "%s(flags %#x): F_GETFD %#x, want FD_CLOEXEC", name, flags, fdflags)
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
	require.NoError(t, err)
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
				if !assert.NoError(t, err, "%s O_NOFOLLOW", p) {
					continue
				}
				var st unix.Stat_t
				err = unix.Fstat(fd, &st)
				unix.Close(fd)
				if assert.NoError(t, err, "%s O_NOFOLLOW: fstat", p) {
					assert.Equal(t, typ, uint32(st.Mode&unix.S_IFMT), "%s O_NOFOLLOW: mode %#o, want type %#o", p, st.Mode, typ)
				}
			}
			fd, err := open(dir, "/etc/l", unix.O_RDONLY|unix.O_NOFOLLOW)
			if !assert.Error(t, err, "/etc/l O_RDONLY|O_NOFOLLOW: opened; want ELOOP") {
				unix.Close(fd)
			}
		})
	}
}
