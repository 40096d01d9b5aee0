package nvcontainer

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

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
		if err := os.WriteFile(twice.Path(stale), []byte("stale"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(twice.Path("etc/.keep.nvc-1"), []byte("not ours"), 0o644); err != nil {
		t.Fatal(err)
	}
	for i, c := range []*container.Container{once, twice, twice} {
		if err := p.Apply(context.Background(), ctrOf(c), nil); err != nil {
			t.Fatalf("Apply %d: %v", i, err)
		}
	}
	want, got := rootfsMounts(t, once), rootfsMounts(t, twice)
	if !slices.Equal(got, want) {
		t.Errorf("mounts after two Applies:\n%s\nafter one:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for _, e := range checkApplied(twice, p) {
		t.Error(e)
	}
	tree := layoutOf(t, twice.HostRootfs)
	var others []string
	for _, l := range strings.Split(tree, "\n") {
		if !strings.HasPrefix(l, "etc/.keep.nvc-1 ") {
			others = append(others, l)
		}
	}
	if wantTree := layoutOf(t, once.HostRootfs); strings.Join(others, "\n") != wantTree {
		t.Errorf("tree after two Applies differs from one's:\n%s", lineDiff(wantTree, strings.Join(others, "\n")))
	}
	if strings.Contains(tree, "nvc-0123456789ab") || strings.Contains(tree, "nvc-00000000abcd") {
		t.Errorf("stale temporaries left:\n%s", tree)
	}
	if !strings.Contains(tree, "etc/.keep.nvc-1") {
		t.Errorf("a file that is not a temporary of ours was removed")
	}
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
