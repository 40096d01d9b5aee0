package cdihook

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-nvc/nvc/internal/testutil"
)

func modeOf(t *testing.T, p string) os.FileMode {
	t.Helper()
	fi, err := os.Lstat(p)
	require.NoError(t, err)
	return fi.Mode() & (os.ModePerm | os.ModeSetuid | os.ModeSetgid | os.ModeSticky)
}

func TestChmod(t *testing.T) {
	outside := testutil.Tree(t, "dir secret 0700\n")
	root := testutil.Tree(t, "dir dev/dri 0700\ndir dev/nvidia-caps 0755\nsymlink dev/evil "+filepath.Join(outside, "secret")+"\ndir etc 0700\n")
	res, err := Chmod(context.Background(), root, &ChmodOptions{Mode: 0o755, Paths: []string{"/dev/dri", "/dev/nvidia-caps", "/dev/evil", "/dev/missing"}})
	require.NoError(t, err)
	assert.Equal(t, []string{"/dev/dri"}, res.Changed, "changed")
	assert.Equal(t, map[string]string{"/dev/nvidia-caps": "already the mode", "/dev/evil": "a symlink", "/dev/missing": "missing"}, res.Skipped, "skipped")
	assert.Equal(t, os.FileMode(0o755), modeOf(t, filepath.Join(root, "dev/dri")))
	assert.Equal(t, os.FileMode(0o700), modeOf(t, filepath.Join(outside, "secret")), "the target of a planted link was changed")
	assert.Equal(t, os.FileMode(0o700), modeOf(t, filepath.Join(root, "etc")), "a path the options do not name was changed")
}

// A parent that is a link out of the root is resolved inside it.
func TestChmodParentLinkStaysInRoot(t *testing.T) {
	outside := testutil.Tree(t, "dir dri 0700\n")
	root := testutil.Tree(t, "symlink dev "+outside+"\n")
	res, err := Chmod(context.Background(), root, &ChmodOptions{Mode: 0o755, Paths: []string{"/dev/dri"}})
	require.NoError(t, err)
	assert.Empty(t, res.Changed)
	assert.Equal(t, os.FileMode(0o700), modeOf(t, filepath.Join(outside, "dri")), "a dir outside the root was changed")
}

func TestChmodSpecialBitsAndErrors(t *testing.T) {
	root := testutil.Tree(t, "dir tmp 0755\n")
	_, err := Chmod(context.Background(), root, &ChmodOptions{Mode: 0o1777, Paths: []string{"/tmp"}})
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o777)|os.ModeSticky, modeOf(t, filepath.Join(root, "tmp")))
	_, err = Chmod(context.Background(), root, &ChmodOptions{Mode: 0o755, Paths: []string{"tmp"}})
	require.ErrorContains(t, err, `"tmp"`)
	_, err = Chmod(context.Background(), root, &ChmodOptions{Mode: 0o10755, Paths: []string{"/tmp"}})
	require.ErrorContains(t, err, "010755")
	res, err := Chmod(context.Background(), root, nil)
	require.NoError(t, err)
	assert.Empty(t, res.Changed)
}
