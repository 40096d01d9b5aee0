package nvcontainer

import (
	"context"
	"errors"
	"os"
	"path"
	"strings"
	"syscall"
	"testing"

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
	if !soname.Replace || glx.Replace {
		t.Fatalf("the plan's links: %+v, %+v; want only the SONAME link replaced", soname, glx)
	}
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
	if !errors.As(err, &ae) || !errors.Is(err, errFault) || ae.UndoErr != nil {
		t.Fatalf("Apply failing at %s = %v, want the fault and a clean undo", StepLDCache, err)
	}
	if now := layoutOf(t, c.HostRootfs); now != before || ino(t, lib+"/libcuda.so.1") != staleIno {
		t.Errorf("a failed Apply did not put the image's links back:\n%s", lineDiff(before, now))
	}
	if err := p.Apply(context.Background(), ctrOf(c), nil); err != nil {
		t.Fatal(err)
	}
	wantLinks(t, lib, map[string]string{
		"libcuda.so.1": soname.Target, glxIndirect: "libGLX_mesa.so.0",
		"libcuda.so": "/usr/local/cuda/lib64/stubs/libcuda.so",
	})
	if rc, out := runProg(t, c); rc != 0 {
		t.Errorf("%s with the re-pointed libcuda.so.1: exit %d: %s", cudaProg, rc, out)
	}
}

func planLink(t *testing.T, p *Plan, at string) Symlink {
	t.Helper()
	for _, s := range p.Symlinks {
		if s.Path == at {
			return s
		}
	}
	t.Fatalf("the plan has no link %s", at)
	return Symlink{}
}

// wantLinks checks the links in dir and that nothing hidden (a replaced
// link kept for undo) is left there.
func wantLinks(t *testing.T, dir string, want map[string]string) {
	t.Helper()
	for name, target := range want {
		if got, err := os.Readlink(path.Join(dir, name)); got != target {
			t.Errorf("%s -> %q (%v), want %q", name, got, err, target)
		}
	}
	des, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, de := range des {
		if strings.HasPrefix(de.Name(), ".") {
			t.Errorf("%s left in %s", de.Name(), dir)
		}
	}
}

func ino(t *testing.T, p string) uint64 {
	t.Helper()
	fi, err := os.Lstat(p)
	if err != nil {
		t.Fatal(err)
	}
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
