package nvcontainer

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-nvc/nvc/internal/testutil/container"
)

// TestApplyAgainConverges: Apply run a second time on a configured
// container (as after a configure killed late, or a hook run twice)
// stacks no mount and leaves the tree as one run does; stale ".nvc-"
// temporaries an interrupted run left in /etc and the library directory
// are removed, and nothing else there.
func TestApplyAgainConverges(t *testing.T) {
	if !inPrivateNS(t) {
		return
	}
	h := newTestHost(t)
	p := h.testPlan(t, fedoraLayout, 2)
	p.CgroupRules = nil
	once, twice := startIn(t, fedoraLayout, false), startIn(t, fedoraLayout, false)
	for _, stale := range []string{"etc/.ld.so.cache.nvc-0123456789ab", "usr/lib64/.libcuda.so.1.nvc-00000000abcd"} {
		require.NoError(t, os.WriteFile(twice.Path(stale), []byte("stale"), 0o644))
	}
	require.NoError(t, os.WriteFile(twice.Path("etc/.keep.nvc-1"), []byte("not ours"), 0o644))
	for i, c := range []*container.Container{once, twice, twice} {
		require.NoError(t, p.Apply(context.Background(), ctrOf(c), nil), "Apply %d", i)
	}
	want, got := rootfsMounts(t, once), rootfsMounts(t, twice)
	assert.Equal(t, want, got, "mounts after two Applies (actual) and after one (expected)")
	assert.Empty(t, checkApplied(twice, p), "the rootfs after two Applies")
	tree := layoutOf(t, twice.HostRootfs)
	var others []string
	for _, l := range strings.Split(tree, "\n") {
		if !strings.HasPrefix(l, "etc/.keep.nvc-1 ") {
			others = append(others, l)
		}
	}
	assert.Equal(t, layoutOf(t, once.HostRootfs), strings.Join(others, "\n"), "tree after two Applies differs from one's")
	assert.NotContains(t, tree, "nvc-0123456789ab", "stale temporaries left")
	assert.NotContains(t, tree, "nvc-00000000abcd", "stale temporaries left")
	assert.Contains(t, tree, "etc/.keep.nvc-1", "a file that is not a temporary of ours was removed")
}

// rootfsMounts is c's mounts in its rootfs as sorted lines of mountpoint
// (relative to the rootfs), root, type and options.
func rootfsMounts(t *testing.T, c *container.Container) []string {
	t.Helper()
	var lines []string
	for _, m := range c.MountInfo(t) {
		rel, ok := strings.CutPrefix(m.Mountpoint, c.HostRootfs)
		if !ok || rel == "" {
			continue
		}
		lines = append(lines, fmt.Sprintf("%s %s %s %s", rel, m.Root, m.FSType, m.Options))
	}
	slices.Sort(lines)
	return lines
}
