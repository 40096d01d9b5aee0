package devices_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-nvc/nvc/devices"
	"github.com/go-nvc/nvc/driver"
	"github.com/go-nvc/nvc/internal/testutil"
)

// charLinks reads every symlink in dir as name -> target.
func charLinks(t *testing.T, dir string) map[string]string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	got := map[string]string{}
	for _, e := range entries {
		target, err := os.Readlink(filepath.Join(dir, e.Name()))
		require.NoError(t, err, e.Name())
		got[e.Name()] = target
	}
	return got
}

// wantLinks is MAJOR:MINOR -> ../<node> for every node of want, relative
// to a char dir inside the dev root.
func wantLinks(want map[string]nodeSpec) map[string]string {
	links := map[string]string{}
	for p, n := range want {
		links[fmt.Sprintf("%d:%d", n.major, n.minor)] = "../" + p
	}
	return links
}

// TestCreateCharLinks checks the /dev/char links of the nodes present:
// every NVIDIA node linked relative to the char dir, nothing else, a second
// run changing nothing, and a wrong link or a file in a link's place
// replaced while another device's link is kept.
func TestCreateCharLinks(t *testing.T) {
	testutil.RequireRoot(t)
	h := migHost(t)
	dev := t.TempDir()
	_, err := devices.CreateNodes(t.Context(), &devices.NodeOptions{Roots: driver.Roots{Proc: h.ProcRoot, Dev: dev}, IMEXChannels: []uint32{0, 7}})
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dev, "nvidia-not-a-node"), nil, 0o644))
	charDir := filepath.Join(dev, "char")
	require.NoError(t, os.MkdirAll(charDir, 0o755))
	require.NoError(t, os.Symlink("../sda", filepath.Join(charDir, "8:0")))
	made, err := devices.CreateCharLinks(&devices.CharLinkOptions{Roots: driver.Roots{Proc: h.ProcRoot, Dev: dev}})
	require.NoError(t, err)
	want := wantLinks(allNodes())
	assert.Len(t, made, len(want), "links made")
	want["8:0"] = "../sda"
	assert.Equal(t, want, charLinks(t, charDir))

	made, err = devices.CreateCharLinks(&devices.CharLinkOptions{Roots: driver.Roots{Proc: h.ProcRoot, Dev: dev}})
	require.NoError(t, err, "second run")
	assert.Empty(t, made, "second run made links")

	require.NoError(t, os.Remove(filepath.Join(charDir, "195:0")))
	require.NoError(t, os.Symlink("../nvidia7", filepath.Join(charDir, "195:0")))
	require.NoError(t, os.Remove(filepath.Join(charDir, "195:255")))
	require.NoError(t, os.WriteFile(filepath.Join(charDir, "195:255"), nil, 0o644))
	made, err = devices.CreateCharLinks(&devices.CharLinkOptions{Roots: driver.Roots{Proc: h.ProcRoot, Dev: dev}})
	require.NoError(t, err, "repair")
	assert.ElementsMatch(t, []devices.CharLink{{Name: "195:0", Target: "../nvidia0"}, {Name: "195:255", Target: "../nvidiactl"}}, made)
	assert.Equal(t, want, charLinks(t, charDir))
}

// TestCreateCharLinksAll checks All: a link for every node the driver has,
// read from procfs, with no node present, into a char dir elsewhere
// (--dev-char-path), and none without All.
func TestCreateCharLinksAll(t *testing.T) {
	h := migHost(t)
	dev := t.TempDir()
	charDir := filepath.Join(t.TempDir(), "links")
	made, err := devices.CreateCharLinks(&devices.CharLinkOptions{Roots: driver.Roots{Proc: h.ProcRoot, Dev: dev}, CharDir: charDir})
	require.NoError(t, err)
	assert.Empty(t, made, "links without nodes and without All")

	made, err = devices.CreateCharLinks(&devices.CharLinkOptions{Roots: driver.Roots{Proc: h.ProcRoot, Dev: dev}, CharDir: charDir, All: true})
	require.NoError(t, err)
	rel, err := filepath.Rel(charDir, dev)
	require.NoError(t, err)
	want := map[string]string{}
	for name, target := range wantLinks(allNodes()) {
		if !strings.Contains(target, "imex") {
			want[name] = filepath.Join(rel, strings.TrimPrefix(target, "../"))
		}
	}
	assert.Len(t, made, len(want))
	assert.Equal(t, want, charLinks(t, charDir))
}
