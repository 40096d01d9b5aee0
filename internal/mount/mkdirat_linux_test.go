package mount

import (
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// TestMkdirAtExactMode: MkdirAt gives the directory exactly perm, the
// bits the umask strips and the set-id and sticky bits included.
func TestMkdirAtExactMode(t *testing.T) {
	old := unix.Umask(0o027)
	defer unix.Umask(old)
	for _, perm := range []fs.FileMode{0o555, 0o777, 0o700, 0o755 | fs.ModeSetgid, 0o777 | fs.ModeSticky} {
		t.Run(perm.String(), func(t *testing.T) {
			dir, err := os.Open(t.TempDir())
			require.NoError(t, err)
			defer dir.Close()
			require.NoError(t, MkdirAt(dir, "d", perm))
			var st unix.Stat_t
			require.NoError(t, unix.Fstatat(int(dir.Fd()), "d", &st, unix.AT_SYMLINK_NOFOLLOW))
			assert.Equal(t, uint32(unix.S_IFDIR), st.Mode&unix.S_IFMT, "type")
			assert.Equal(t, unixMode(perm), st.Mode&0o7777, "mode %o, want %o", st.Mode&0o7777, unixMode(perm))
		})
	}
}

// TestChmodAtRefusesSymlink: chmodAt never changes what a symlink at the
// name points to (fchmodat2 refuses the link; the fallback's O_NOFOLLOW
// open fails on it).
func TestChmodAtRefusesSymlink(t *testing.T) {
	outside := filepath.Join(t.TempDir(), "target")
	require.NoError(t, os.Mkdir(outside, 0o700))
	d := t.TempDir()
	require.NoError(t, os.Symlink(outside, filepath.Join(d, "l")))
	dir, err := os.Open(d)
	require.NoError(t, err)
	defer dir.Close()
	assert.Error(t, chmodAt(dir, "l", 0o777), "chmod through a symlink")
	fi, err := os.Stat(outside)
	require.NoError(t, err)
	assert.Equal(t, fs.FileMode(0o700), fi.Mode().Perm(), "the symlink's target changed mode")
}
