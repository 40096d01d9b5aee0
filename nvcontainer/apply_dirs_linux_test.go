package nvcontainer

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"

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
	if assert.ErrorAs(t, err, &ae, "Apply = %v, want ErrVolume at mount \"/x/b\"", err) {
		assert.Equal(t, StepMount, ae.Step, "Apply = %v, want ErrVolume at mount \"/x/b\"", err)
		assert.Equal(t, "/x/b", ae.Path, "Apply = %v, want ErrVolume at mount \"/x/b\"", err)
	}
	assert.ErrorIs(t, err, ErrVolume, "Apply")
	_, lerr := os.Lstat(filepath.Join(c.HostRootfs, "x/b"))
	assert.ErrorIs(t, lerr, os.ErrNotExist, "x/b was made below the directory mount")
	assert.Empty(t, newMounts(before, c.MountInfo(t)), "a failed Apply changed the container: mounts")
	assert.Equal(t, tree, layoutOf(t, c.HostRootfs), "a failed Apply changed the container's tree")
	host.check(t)
}
