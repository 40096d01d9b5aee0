package fstree_test

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/go-nvc/nvc/internal/fstree"
	"github.com/go-nvc/nvc/internal/testutil"
)

func TestBuildCharNode(t *testing.T) {
	testutil.RequireRoot(t)
	root := t.TempDir()
	require.NoError(t, fstree.Create(root, "char dev/nvidiactl 195 255 0666", nil))
	var st unix.Stat_t
	require.NoError(t, unix.Lstat(filepath.Join(root, "dev/nvidiactl"), &st))
	assert.Equal(t, uint32(unix.S_IFCHR), st.Mode&unix.S_IFMT, "node mode %o", st.Mode)
	assert.Equal(t, uint32(0o666), st.Mode&0o777, "node mode %o", st.Mode)
	assert.Equal(t, uint32(195), unix.Major(st.Rdev), "node rdev major")
	assert.Equal(t, uint32(255), unix.Minor(st.Rdev), "node rdev minor")
}
