package container

import (
	"os"
	"os/exec"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-nvc/nvc/internal/testutil"
)

// TestInPrivateMountNS: a mount made meanwhile in the parent's namespace
// (as another package's test makes one on the host) shows in the parent's
// mount table but not in the child's, so the child's before/after
// comparisons see only its own work.
func TestInPrivateMountNS(t *testing.T) {
	if !InPrivateMountNS(t) {
		return
	}
	nsenter := testutil.RequireCommand(t, "nsenter")
	parent, dir := strconv.Itoa(os.Getppid()), t.TempDir()
	before := readHostMountinfo(t)
	out, err := exec.Command(nsenter, "-t", parent, "-m", Busybox, "mount", "-t", "tmpfs", "nvc-foreign", dir).CombinedOutput()
	require.NoError(t, err, "mounting in the parent's namespace: %s", out)
	defer exec.Command(nsenter, "-t", parent, "-m", Busybox, "umount", dir).Run()
	data, err := os.ReadFile("/proc/" + parent + "/mountinfo")
	require.NoError(t, err, "the parent's table")
	require.Contains(t, string(data), "nvc-foreign", "the mount is not in the parent's table")
	assert.Equal(t, before, readHostMountinfo(t), "the parent's mount shows in the child's table")
}
