package nvcontainer

import (
	"context"
	"errors"
	"os"
	"slices"
	"strings"
	"testing"
)

// muslImage makes a fedora-layout image a musl one (its loader is there)
// with a path file of its own.
const muslImage = `
file lib/ld-musl-x86_64.so.1 "not run"
file etc/ld-musl-x86_64.path "/lib\n/usr/lib\n"
`

// TestApplyMuslPathFile: in a musl image Apply puts the plan's library
// directories first in the loader's path file, keeping the image's own
// entries after them, and leaves its ld.so.cache alone; a failure after that
// step puts the image's path file back as it was.
func TestApplyMuslPathFile(t *testing.T) {
	if !inPrivateNS(t) {
		return
	}
	h := newTestHost(t)
	p := h.testPlan(t, fedoraLayout, 1)
	dirs := append(slices.Clip(p.LDCache.FirstDirs), p.LDCache.Dirs...)
	if len(dirs) == 0 {
		t.Fatal("the plan adds no directory to the loader's search")
	}
	c := startWith(t, fedoraLayout, muslImage)
	before := layoutOf(t, c.HostRootfs)
	err := p.Apply(context.Background(), ctrOf(c), &ApplyOptions{fault: func(s Step, _ string) error {
		if s == StepCommit {
			return errFault
		}
		return nil
	}})
	var ae *ApplyError
	if !errors.As(err, &ae) || !errors.Is(err, errFault) || ae.UndoErr != nil {
		t.Fatalf("Apply failing at %s = %v, want the fault and a clean undo", StepCommit, err)
	}
	if now := layoutOf(t, c.HostRootfs); now != before {
		t.Errorf("a failed Apply left the musl image changed:\n%s", lineDiff(before, now))
	}
	if err := p.Apply(context.Background(), ctrOf(c), nil); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(c.Path("/etc/ld-musl-x86_64.path"))
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Join(append(dirs, "/lib", "/usr/lib"), "\n") + "\n"
	if string(got) != want {
		t.Errorf("musl path file:\n%s\nwant:\n%s", got, want)
	}
	if cache, err := os.ReadFile(c.Path("/etc/ld.so.cache")); err != nil || len(cache) != 0 {
		t.Errorf("the musl image's (empty) ld.so.cache was written: %d bytes, %v", len(cache), err)
	}
}
