//go:build e2e

package e2e

import (
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-nvc/nvc/internal/testutil/container"
)

// TestCLIConfigureKilledConverges is issue 15's point 7: configure is
// killed with SIGKILL part-way 10 times in one container (at delays
// spread over a clean run's duration), then run to completion. The
// container must end up as a twin configured once, cleanly: the same
// mounts in its rootfs (none stacked twice on one target), the same tree,
// and no ".nvc-" temporaries.
func TestCLIConfigureKilledConverges(t *testing.T) {
	clean := newConfigureTarget(t)
	killed := newConfigureTarget(t)
	killed.host = clean.host
	buildExample(t, "nvidia-container-cli", false) // not timed
	began := time.Now()
	stderr, code := clean.configure(t)
	require.Equal(t, 0, code, "clean configure: exit %d\n%s", code, stderr)
	took := time.Since(began)
	const kills = 10
	for i := range kills {
		killed.killAfter(t, took*time.Duration(i+1)/kills)
	}
	stderr, code = killed.configure(t)
	require.Equal(t, 0, code, "configure after %d kills: exit %d\n%s", kills, code, stderr)
	want, got := clean.mountTable(t), killed.mountTable(t)
	assert.True(t, slices.Equal(got, want), "mounts after %d kills and a retry differ from a clean run's:\ngot:\n%s\nwant:\n%s", kills, strings.Join(got, "\n"), strings.Join(want, "\n"))
	for i := 1; i < len(got); i++ {
		assert.NotEqual(t, strings.Fields(got[i-1])[0], strings.Fields(got[i])[0], "two mounts stacked on %s", strings.Fields(got[i])[0])
	}
	wantTree, gotTree := container.Layout(t, clean.ctr.HostRootfs), container.Layout(t, killed.ctr.HostRootfs)
	assert.Equal(t, wantTree, gotTree, "rootfs after %d kills and a retry differs from a clean run's", kills)
	assert.NotContains(t, gotTree, ".nvc-", "temporaries left in the rootfs")
}

// killAfter starts configure and kills it with SIGKILL after d (or lets it
// finish, if it is quicker).
func (ct *configureTarget) killAfter(t *testing.T, d time.Duration) {
	t.Helper()
	args := append(hostFlags(ct.host), "configure", fmt.Sprintf("--pid=%d", ct.ctr.PID), "--device=0", "--compute", "--utility", "--no-cgroups", ct.ctr.Rootfs)
	cmd := exec.Command(buildExample(t, "nvidia-container-cli", false), args...)
	require.NoError(t, cmd.Start())
	time.Sleep(d)
	cmd.Process.Kill()
	cmd.Wait()
}

// mountTable is the container's mounts in its rootfs as sorted lines of
// mountpoint (relative to the rootfs), the mount's root, type and options.
func (ct *configureTarget) mountTable(t *testing.T) []string {
	t.Helper()
	var lines []string
	for _, m := range ct.ctr.MountInfo(t) {
		rel, ok := strings.CutPrefix(m.Mountpoint, ct.ctr.HostRootfs)
		if !ok || rel == "" {
			continue
		}
		lines = append(lines, fmt.Sprintf("%s %s %s %s", rel, m.Root, m.FSType, m.Options))
	}
	slices.Sort(lines)
	return lines
}
