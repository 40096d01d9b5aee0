package nvcontainer

import (
	"context"
	"os"
	"path"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-nvc/nvc/internal/testutil"
	"github.com/go-nvc/nvc/internal/testutil/container"
)

// imageLinks is what images bring where a plan makes links, in the
// layout's library dir LIB: Mesa's libGLX_indirect.so.0 (Ubuntu's
// libglx-mesa0), a CUDA image's libcuda.so stub link and, from a docker
// commit of a GPU container, a stale libcuda.so.1 beside the empty
// placeholder of the old driver's library.
const imageLinks = `
symlink LIB/libGLX_indirect.so.0 libGLX_mesa.so.0
symlink LIB/libcuda.so /usr/local/cuda/lib64/stubs/libcuda.so
symlink LIB/libcuda.so.1 libcuda.so.535.104.05
file    LIB/libcuda.so.535.104.05 ""
`

func imageLinksIn(l Layout) string {
	return strings.ReplaceAll(imageLinks, "LIB", strings.TrimPrefix(l.LibDir, "/"))
}

// TestApplyImageLinks: Apply on an image that already has links where
// the plan makes them. A failure after the symlink step puts the stale
// SONAME link back exactly; a successful Apply points it at the host
// library (and the loader, through our cache, loads that), and keeps the
// image's own extra links.
func TestApplyImageLinks(t *testing.T) {
	if !inPrivateNS(t) {
		return
	}
	h := newTestHost(t)
	l := debianLayout
	p := h.testPlan(t, l, 1)
	soname, glx := planLink(t, p, l.LibDir+"/libcuda.so.1"), planLink(t, p, l.LibDir+"/"+glxIndirect)
	require.True(t, soname.Replace, "the plan's links: %+v, %+v; want only the SONAME link replaced", soname, glx)
	require.False(t, glx.Replace, "the plan's links: %+v, %+v; want only the SONAME link replaced", soname, glx)
	c := startWith(t, l, imageLinksIn(l))
	lib := c.Path(l.LibDir)
	before, staleIno := layoutOf(t, c.HostRootfs), ino(t, lib+"/libcuda.so.1")
	err := p.Apply(context.Background(), ctrOf(c), &ApplyOptions{fault: func(s Step, _ string) error {
		if s == StepLDCache {
			return errFault
		}
		return nil
	}})
	var ae *ApplyError
	require.ErrorAs(t, err, &ae, "Apply failing at %s = %v, want the fault and a clean undo", StepLDCache, err)
	require.ErrorIs(t, err, errFault, "Apply failing at %s, want the fault and a clean undo", StepLDCache)
	require.NoError(t, ae.UndoErr, "Apply failing at %s = %v, want the fault and a clean undo", StepLDCache, err)
	assert.Equal(t, before, layoutOf(t, c.HostRootfs), "a failed Apply did not put the image's links back")
	assert.Equal(t, staleIno, ino(t, lib+"/libcuda.so.1"), "a failed Apply did not put the image's stale libcuda.so.1 back")
	require.NoError(t, p.Apply(context.Background(), ctrOf(c), nil))
	wantLinks(t, lib, map[string]string{
		"libcuda.so.1": soname.Target, glxIndirect: "libGLX_mesa.so.0",
		"libcuda.so": "/usr/local/cuda/lib64/stubs/libcuda.so",
	})
	rc, out := runProg(t, c)
	assert.Equal(t, 0, rc, "%s with the re-pointed libcuda.so.1: exit status: %s", cudaProg, out)
}

func planLink(t *testing.T, p *Plan, at string) Symlink {
	t.Helper()
	for _, s := range p.Symlinks {
		if s.Path == at {
			return s
		}
	}
	require.Failf(t, "the plan has no link", "%s", at)
	return Symlink{}
}

// wantLinks checks the links in dir and that nothing hidden (a replaced
// link kept for undo) is left there.
func wantLinks(t *testing.T, dir string, want map[string]string) {
	t.Helper()
	for name, target := range want {
		got, err := os.Readlink(path.Join(dir, name))
		assert.Equal(t, target, got, "%s -> %q (%v)", name, got, err)
	}
	des, err := os.ReadDir(dir)
	require.NoError(t, err)
	for _, de := range des {
		assert.False(t, strings.HasPrefix(de.Name(), "."), "%s left in %s", de.Name(), dir)
	}
}

func ino(t *testing.T, p string) uint64 {
	t.Helper()
	fi, err := os.Lstat(p)
	require.NoError(t, err)
	return fi.Sys().(*syscall.Stat_t).Ino
}

// startWith starts a test container, as an OCI hook sees it, on a new
// rootfs of layout l with spec built in it.
func startWith(tb testing.TB, l Layout, spec string) *container.Container {
	tb.Helper()
	dir := newRootfs(tb, l)
	testutil.BuildTree(tb, dir, spec)
	return container.Start(tb, &container.Options{Rootfs: dir})
}
