package nvcontainer

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/go-nvc/nvc/internal/testutil"
)

// TestApplyResolvesThroughDirMounts: Apply reuses a target directory it
// has resolved (all libraries go into one or two), but not past a
// directory mount: a target below one is resolved through the mount, as
// if resolved afresh. Here /x/a makes Apply keep /x, a host directory is
// then mounted on /x, and /x/b must be looked for in that mount (and
// refused there: a placeholder would be made in the host directory, see
// TestApplyVolumes) instead of in the /x the mount hides.
func TestApplyResolvesThroughDirMounts(t *testing.T) {
	if !inPrivateNS(t) {
		return
	}
	src := testutil.Tree(t, "file lib \"library\"\ndir dir\nfile dir/inside \"host dir\"")
	p := &Plan{Version: PlanVersion, Mounts: []Mount{
		{Kind: MountLibrary, Source: filepath.Join(src, "lib"), Target: "/x/a", Options: []string{"ro", "nosuid", "nodev"}},
		{Kind: MountIPC, Source: filepath.Join(src, "dir"), Target: "/x", Options: []string{"ro", "nosuid", "nodev"}, Dir: true},
		{Kind: MountLibrary, Source: filepath.Join(src, "lib"), Target: "/x/b", Options: []string{"ro", "nosuid", "nodev"}},
	}}
	c := startIn(t, fedoraLayout, false)
	host := recordHost(t, src)
	before := c.MountInfo(t)
	tree := layoutOf(t, c.HostRootfs)
	err := p.Apply(context.Background(), ctrOf(c), nil)
	var ae *ApplyError
	if !errors.As(err, &ae) || ae.Step != StepMount || ae.Path != "/x/b" || !errors.Is(err, ErrVolume) {
		t.Errorf("Apply = %v, want ErrVolume at mount \"/x/b\"", err)
	}
	if _, err := os.Lstat(filepath.Join(c.HostRootfs, "x/b")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("x/b was made below the directory mount: %v", err)
	}
	if added := newMounts(before, c.MountInfo(t)); len(added) > 0 || layoutOf(t, c.HostRootfs) != tree {
		t.Errorf("a failed Apply changed the container: mounts %q", added)
	}
	host.check(t)
}
