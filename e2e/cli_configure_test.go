//go:build e2e

package e2e

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-nvc/nvc/internal/fakehost"
	"github.com/go-nvc/nvc/internal/testutil/container"
)

// configureTarget is a running test container (mount and PID namespaces,
// hook-time view: rootfs at its host path, no pivot) and a simulated host.
type configureTarget struct {
	host *fakehost.Host
	ctr  *container.Container
}

func newConfigureTarget(t *testing.T) *configureTarget {
	t.Helper()
	c := container.Start(t, &container.Options{Spec: `
file etc/debian_version "12.5\n"
file etc/ld.so.cache ""
dir  usr/lib/x86_64-linux-gnu
dir  usr/bin
dir  proc/driver/nvidia
dir  dev
`})
	return &configureTarget{host: simHost(t, nil), ctr: c}
}

// state is what configure could change: the rootfs tree and the
// container's mounts in it (the rest of its mount table is a copy of the
// host's, which other tests change).
func (ct *configureTarget) state(t *testing.T) (container.Snapshot, string) {
	t.Helper()
	var mounts []string
	for _, m := range ct.ctr.MountInfo(t) {
		if !strings.HasPrefix(m.Mountpoint, ct.ctr.HostRootfs) {
			continue
		}
		mounts = append(mounts, fmt.Sprintf("%s %s %s", m.Mountpoint, m.FSType, m.Options))
	}
	return container.SnapshotTree(t, ct.ctr.HostRootfs), strings.Join(mounts, "\n")
}

func (ct *configureTarget) configure(t *testing.T, extra ...string) (string, int) {
	t.Helper()
	args := append(hostFlags(ct.host), "configure", fmt.Sprintf("--pid=%d", ct.ctr.PID), "--device=0", "--compute", "--utility", "--no-cgroups")
	_, stderr, code := cli(t, append(append(args, extra...), ct.ctr.Rootfs)...)
	return stderr, code
}

// TestCLIConfigureUnmetRequirement runs configure on a live container with
// a requirement the host does not meet, after one it meets: exit 1,
// libnvidia-container's requirement error naming the unmet clause, and
// nothing changed — not a file of the rootfs, not a mount of the
// container. The same configure without the requirement then changes both,
// so the comparison can see a change. (The host is read through procfs, so
// its CUDA version is unknown and a cuda term could not be met.)
func TestCLIConfigureUnmetRequirement(t *testing.T) {
	ct := newConfigureTarget(t)
	tree, mounts := ct.state(t)
	for _, req := range []string{"driver>=999", "driver>=999 driver>=998,driver>=500"} {
		t.Run(req, func(t *testing.T) {
			stderr, code := ct.configure(t, "--require=driver>=500", "--require="+req)
			clause, _, _ := strings.Cut(req, " ")
			want := "nvidia-container-cli: requirement error: unsatisfied condition: " + clause + "\n"
			assert.Equal(t, 1, code, "--require=%s: exit status; stderr %q", req, stderr)
			assert.Equal(t, want, stderr, "--require=%s: stderr", req)
			afterTree, afterMounts := ct.state(t)
			diff := container.DiffSnapshots(tree, afterTree)
			assert.Empty(t, diff, "--require=%s changed the container's tree:\n%s", req, strings.Join(diff, "\n"))
			assert.Equal(t, mounts, afterMounts, "--require=%s changed the container's mounts", req)
		})
	}

	stderr, code := ct.configure(t, "--require=driver>="+ct.host.DriverVersion)
	require.Equal(t, 0, code, "configure with a met requirement: exit %d\n%s", code, stderr)
	afterTree, afterMounts := ct.state(t)
	assert.NotEmpty(t, container.DiffSnapshots(tree, afterTree), "configure with a met requirement changed no file the test can see")
	assert.NotEqual(t, mounts, afterMounts, "configure with a met requirement changed no mount the test can see")
	out, err := ct.ctr.Exec(t, "ls", ct.ctr.Rootfs+"/dev/nvidia0")
	assert.NoError(t, err, "after configure, /dev/nvidia0 in the container: %s", out)
}
