package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/go-nvc/nvc/internal/testutil"
	"github.com/go-nvc/nvc/nvcontainer/nvctest"
)

// TestSystemCreateDeviceNodes: the nodes land under --dev-root, and
// create-dev-char-symlinks then links each of them from --dev-char-path.
func TestSystemCreateDeviceNodes(t *testing.T) {
	testutil.RequireRoot(t)
	h := nvctest.NewHost(t, nvctest.DGXA100, nil)
	dev := t.TempDir()
	code, out, stderr := ctk(t, "system", "create-device-nodes", "--control-devices", "--proc-root", h.Roots.Proc, "--dev-root", dev)
	require.Equal(t, 0, code, stderr)
	assert.Empty(t, out)
	for _, n := range []struct {
		name         string
		major, minor uint32
	}{{"nvidiactl", 195, 255}, {"nvidia0", 195, 0}, {"nvidia7", 195, 7}} {
		var st unix.Stat_t
		require.NoError(t, unix.Lstat(filepath.Join(dev, n.name), &st), n.name)
		assert.Equal(t, uint32(unix.S_IFCHR), st.Mode&unix.S_IFMT, n.name)
		assert.Equal(t, [2]uint32{n.major, n.minor}, [2]uint32{unix.Major(st.Rdev), unix.Minor(st.Rdev)}, n.name)
	}
	_, err := os.Stat(filepath.Join(dev, "nvidia-uvm"))
	assert.NoError(t, err, "control device nvidia-uvm")

	links := filepath.Join(dev, "char")
	code, _, stderr = ctk(t, "system", "create-dev-char-symlinks", "--proc-root", h.Roots.Proc, "--dev-root", dev, "--dev-char-path", links)
	require.Equal(t, 0, code, stderr)
	for link, want := range map[string]string{"195:255": "../nvidiactl", "195:0": "../nvidia0", "195:7": "../nvidia7"} {
		got, err := os.Readlink(filepath.Join(links, link))
		require.NoError(t, err, link)
		assert.Equal(t, want, got, link)
	}
}

// TestSystemCreateDevCharSymlinksAll: --create-all links the driver's
// nodes read from procfs with none present; without it nothing is linked.
func TestSystemCreateDevCharSymlinksAll(t *testing.T) {
	h := nvctest.NewHost(t, nvctest.DGXA100, nil)
	root := t.TempDir()
	links := filepath.Join(root, "dev", "char")
	for _, tc := range []struct {
		name string
		all  bool
	}{{"present", false}, {"create-all", true}} {
		t.Run(tc.name, func(t *testing.T) {
			args := []string{"system", "create-dev-char-symlinks", "--driver-root", root, "--proc-root", h.Roots.Proc, "--dev-char-path", links}
			if tc.all {
				args = append(args, "--create-all")
			}
			code, _, stderr := ctk(t, args...)
			require.Equal(t, 0, code, stderr)
			got, err := os.Readlink(filepath.Join(links, "195:0"))
			if !tc.all {
				assert.ErrorIs(t, err, os.ErrNotExist, "a link without the node")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, "../nvidia0", got)
			got, err = os.Readlink(filepath.Join(links, "195:255"))
			require.NoError(t, err)
			assert.Equal(t, "../nvidiactl", got)
		})
	}
}

// TestSystemCreateDevCharSymlinksNodes: with --create-device-nodes, the
// missing nodes are made under --dev-root first and then linked, as the
// toolkit's create-dev-char-symlinks does; without it an empty dev root
// gets no link. create-device-nodes takes the toolkit's --root alias.
func TestSystemCreateDevCharSymlinksNodes(t *testing.T) {
	testutil.RequireRoot(t)
	h := nvctest.NewHost(t, nvctest.DGXA100, nil)
	for _, tc := range []struct {
		name  string
		extra []string
		made  bool
	}{{"links only", nil, false}, {"create-device-nodes", []string{"--create-device-nodes"}, true}} {
		t.Run(tc.name, func(t *testing.T) {
			dev := t.TempDir()
			links := filepath.Join(dev, "char")
			args := append([]string{"system", "create-dev-char-symlinks", "--proc-root", h.Roots.Proc, "--dev-root", dev, "--dev-char-path", links}, tc.extra...)
			code, _, stderr := ctk(t, args...)
			require.Equal(t, 0, code, stderr)
			got, err := os.Readlink(filepath.Join(links, "195:3"))
			if !tc.made {
				assert.ErrorIs(t, err, os.ErrNotExist)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, "../nvidia3", got)
			var st unix.Stat_t
			require.NoError(t, unix.Lstat(filepath.Join(dev, "nvidia3"), &st))
			assert.Equal(t, uint32(unix.S_IFCHR), st.Mode&unix.S_IFMT)
		})
	}
	dev := t.TempDir()
	code, _, stderr := ctk(t, "system", "create-device-nodes", "--root", "/", "--proc-root", h.Roots.Proc, "--dev-root", dev)
	require.Equal(t, 0, code, stderr)
	_, err := os.Stat(filepath.Join(dev, "nvidiactl"))
	assert.NoError(t, err, "create-device-nodes --root")
}
