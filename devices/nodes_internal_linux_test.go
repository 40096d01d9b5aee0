package devices

import (
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-nvc/nvc/internal/testutil"
)

// TestChmodFD checks both ways chmodFD can change a mode (fchmodat2 and
// the /proc/thread-self/fd fallback, forced here): each acts on the node
// the descriptor was opened on even after its name was replaced by a
// symlink to another file, which keeps its mode.
func TestChmodFD(t *testing.T) {
	testutil.RequireRoot(t)
	for name, chmod := range map[string]func(int, fs.FileMode) error{"fchmodat2": chmodFD, "proc": chmodProcFD} {
		t.Run(name, func(t *testing.T) { chmodThroughSwap(t, name, chmod) })
	}
}

func chmodThroughSwap(t *testing.T, name string, chmod func(int, fs.FileMode) error) {
	dir := t.TempDir()
	node, victim := filepath.Join(dir, "nvidia0"), filepath.Join(dir, "victim")
	require.NoError(t, unix.Mknod(node, unix.S_IFCHR|0o600, int(unix.Mkdev(1, 3))))
	require.NoError(t, os.WriteFile(victim, nil, 0o600))
	fd, err := unix.Open(node, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	require.NoError(t, err)
	defer unix.Close(fd)
	require.NoError(t, os.Remove(node))
	require.NoError(t, os.Symlink(victim, node))
	require.NoError(t, chmod(fd, 0o640), name)
	var st unix.Stat_t
	if assert.NoError(t, unix.Fstat(fd, &st), "%s: node", name) {
		assert.Equal(t, uint32(0o640), st.Mode&0o7777, "%s: node mode", name)
	}
	fi, err := os.Stat(victim)
	if assert.NoError(t, err, "%s: victim", name) {
		assert.Equal(t, fs.FileMode(0o600), fi.Mode().Perm(), "%s: victim mode", name)
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
		t.Run(prog, func(t *testing.T) {
			err := findProgram(root, prog)
			if want == nil {
				assert.NoError(t, err, "findProgram(%s)", prog)
			} else {
				assert.ErrorIs(t, err, want, "findProgram(%s)", prog)
			}
		})
	}
}
