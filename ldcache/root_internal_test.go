package ldcache

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// TestRootStatStaysInRoot: stat and lstat look a name up in its
// directory opened once (dirAt); symlinks on the way, absolute or
// climbing with "..", and a last name of "..", resolve inside the root
// as openat2 RESOLVE_IN_ROOT does, never to the host directory they
// name, and a final symlink is followed inside the root too.
func TestRootStatStaysInRoot(t *testing.T) {
	outside := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(outside, "hostonly"), []byte("host"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(outside, "shared"), []byte("host file"), 0o644))
	rootPath := t.TempDir()
	climb := strings.Repeat("../", 16) + strings.TrimPrefix(outside, "/")
	require.NoError(t, os.MkdirAll(filepath.Join(rootPath, strings.TrimPrefix(outside, "/")), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(rootPath, strings.TrimPrefix(outside, "/"), "shared"), []byte("in"), 0o644))
	for name, target := range map[string]string{"abs": outside, "climb": climb, "lib": "abs", "hostfile": outside + "/hostonly", "file": climb + "/shared"} {
		require.NoError(t, os.Symlink(target, filepath.Join(rootPath, name)))
	}
	r, err := openRoot(rootPath)
	require.NoError(t, err)
	defer r.close()
	for _, tc := range []struct {
		name, path string
		follow     bool
		size       int64 // -1: ENOENT
		mode       uint32
	}{
		{"absolute symlink on the way", "/abs/shared", false, 2, unix.S_IFREG},
		{"climbing symlink on the way", "/climb/shared", true, 2, unix.S_IFREG},
		{"symlink to a symlink on the way", "lib/shared", false, 2, unix.S_IFREG},
		{"host-only name", "/abs/hostonly", false, -1, 0},
		{"host-only name, climbing", "/climb/hostonly", true, -1, 0},
		{"final symlink to the host", "/hostfile", true, -1, 0},
		{"final symlink, not followed", "/hostfile", false, int64(len(outside + "/hostonly")), unix.S_IFLNK},
		{"final climbing symlink", "/file", true, 2, unix.S_IFREG},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, err := r.lstat(tc.path)
			if tc.follow {
				st, err = r.stat(tc.path)
			}
			if tc.size < 0 {
				assert.Equal(t, unix.ENOENT, err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.mode, st.Mode&unix.S_IFMT)
			assert.Equal(t, tc.size, st.Size)
		})
	}
	t.Run("dot-dot of the root is the root", func(t *testing.T) {
		var want unix.Stat_t
		require.NoError(t, unix.Stat(rootPath, &want))
		for _, p := range []string{"/..", "/abs/../../../..", "/"} {
			st, err := r.lstat(p)
			require.NoError(t, err, p)
			assert.Equal(t, want.Ino, st.Ino, p)
		}
	})
}
