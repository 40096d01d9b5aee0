package tegra

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/go-nvc/nvc/internal/inroot"
	"github.com/go-nvc/nvc/internal/testutil"
)

// TestFilesStayInRoot: the mount spec directory, and a spec file in it,
// are symlinks to absolute paths outside the root, whose CSV names
// /dev/outside. Files and Load resolve both inside the root, as Resolve
// does: the spec dir is the root's copy of that path, and the file link
// names nothing there; the outside CSV is never read.
func TestFilesStayInRoot(t *testing.T) {
	outside := testutil.Tree(t, "file devices.csv dev, /dev/outside\nfile drivers.csv dev, /dev/outside\n")
	root := testutil.Tree(t, "dir etc/nvidia-container-runtime\n")
	inside := filepath.Join(root, outside) // the same path, in the root
	testutil.BuildTree(t, inside, "file devices.csv dev, /dev/inside\nfile l4t.csv lib, /usr/lib/inside.so\n")
	require.NoError(t, os.Symlink(outside, filepath.Join(root, DefaultMountSpecPath)))
	require.NoError(t, os.Remove(filepath.Join(inside, "l4t.csv")))
	require.NoError(t, os.Symlink(filepath.Join(outside, "drivers.csv"), filepath.Join(inside, "l4t.csv")))

	files, err := Files(root, DefaultMountSpecPath)
	require.NoError(t, err)
	assert.Equal(t, []string{DefaultMountSpecPath + "/devices.csv", DefaultMountSpecPath + "/l4t.csv"}, files)
	es, err := Load(root, files)
	require.NoError(t, err, "l4t.csv names nothing inside the root: skipped")
	require.Len(t, es, 1, "entries %v", es)
	assert.Equal(t, Entry{Kind: KindDev, Path: "/dev/inside", File: root + DefaultMountSpecPath + "/devices.csv", Line: 1}, es[0],
		"named by its host path, the root's")

	none, err := Files(root, "/../../etc/missing")
	require.NoError(t, err)
	assert.Empty(t, none)
}

// TestLoadRegularOnly: a spec file that is a FIFO is refused without
// being opened (which would block), naming it.
func TestLoadRegularOnly(t *testing.T) {
	root := t.TempDir()
	require.NoError(t, unix.Mkfifo(filepath.Join(root, "devices.csv"), 0o644))
	done := make(chan error, 1)
	go func() {
		_, err := Load(root, []string{"/devices.csv"})
		done <- err
	}()
	select {
	case err := <-done:
		require.ErrorIs(t, err, inroot.ErrNotRegular)
		assert.Contains(t, err.Error(), "devices.csv")
	case <-time.After(5 * time.Second):
		t.Fatal("Load blocked on a FIFO")
	}
}
