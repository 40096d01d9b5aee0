package container

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

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
	if err != nil {
		t.Fatalf("mounting in the parent's namespace: %v: %s", err, out)
	}
	defer exec.Command(nsenter, "-t", parent, "-m", Busybox, "umount", dir).Run()
	if data, err := os.ReadFile("/proc/" + parent + "/mountinfo"); err != nil || !strings.Contains(string(data), "nvc-foreign") {
		t.Fatalf("the mount is not in the parent's table (%v)", err)
	}
	if after := readHostMountinfo(t); after != before {
		t.Errorf("the parent's mount shows in the child's table:\nbefore:\n%s\nafter:\n%s", before, after)
	}
}
