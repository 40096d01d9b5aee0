package devices

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/go-nvc/nvc/internal/testutil"
)

// TestChmodFD checks both ways chmodFD can change a mode (fchmodat2 and
// the /proc/thread-self/fd fallback, forced here): each acts on the node
// the descriptor was opened on even after its name was replaced by a
// symlink to another file, which keeps its mode.
func TestChmodFD(t *testing.T) {
	testutil.RequireRoot(t)
	for name, chmod := range map[string]func(int, fs.FileMode) error{"fchmodat2": chmodFD, "proc": chmodProcFD} {
		dir := t.TempDir()
		node, victim := filepath.Join(dir, "nvidia0"), filepath.Join(dir, "victim")
		if err := unix.Mknod(node, unix.S_IFCHR|0o600, int(unix.Mkdev(1, 3))); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(victim, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		fd, err := unix.Open(node, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer unix.Close(fd)
		if err := os.Remove(node); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(victim, node); err != nil {
			t.Fatal(err)
		}
		if err := chmod(fd, 0o640); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var st unix.Stat_t
		if err := unix.Fstat(fd, &st); err != nil || st.Mode&0o7777 != 0o640 {
			t.Errorf("%s: node mode %o (%v)", name, st.Mode&0o7777, err)
		}
		if fi, err := os.Stat(victim); err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: victim mode %v (%v)", name, fi.Mode(), err)
		}
	}
}

// TestFindProgram checks the modprobe lookup: an absolute path resolved
// inside the driver root (an absolute symlink stays in it) that must name a
// regular file.
func TestFindProgram(t *testing.T) {
	root := testutil.Tree(t, `
file sbin/modprobe
symlink usr/sbin/modprobe /sbin/modprobe
symlink bin/escape /../../../../etc/passwd
dir sbin/dir
`)
	for prog, want := range map[string]error{
		"/sbin/modprobe":     nil,
		"/usr/sbin/modprobe": nil,
		"sbin/modprobe":      ErrInvalid,
		"/sbin/dir":          ErrInvalid,
		"/sbin/missing":      fs.ErrNotExist,
		"/bin/escape":        fs.ErrNotExist,
	} {
		if err := findProgram(root, prog); !errors.Is(err, want) {
			t.Errorf("findProgram(%s) = %v, want %v", prog, err, want)
		}
	}
}
