package nvcontainer

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
	require.NotEmpty(t, dirs, "the plan adds no directory to the loader's search")
	c := startWith(t, fedoraLayout, muslImage)
	before := layoutOf(t, c.HostRootfs)
	err := p.Apply(context.Background(), ctrOf(c), &ApplyOptions{fault: func(s Step, _ string) error {
		if s == StepCommit {
			return errFault
		}
		return nil
	}})
	var ae *ApplyError
	require.ErrorAs(t, err, &ae, "Apply failing at %s = %v, want the fault and a clean undo", StepCommit, err)
	require.ErrorIs(t, err, errFault, "Apply failing at %s, want the fault and a clean undo", StepCommit)
	require.NoError(t, ae.UndoErr, "Apply failing at %s = %v, want the fault and a clean undo", StepCommit, err)
	assert.Equal(t, before, layoutOf(t, c.HostRootfs), "a failed Apply left the musl image changed")
	require.NoError(t, p.Apply(context.Background(), ctrOf(c), nil))
	got, err := os.ReadFile(c.Path("/etc/ld-musl-x86_64.path"))
	require.NoError(t, err)
	want := strings.Join(append(dirs, "/lib", "/usr/lib"), "\n") + "\n"
	assert.Equal(t, want, string(got), "musl path file")
	cache, err := os.ReadFile(c.Path("/etc/ld.so.cache"))
	assert.NoError(t, err, "the musl image's (empty) ld.so.cache")
	assert.Empty(t, cache, "the musl image's (empty) ld.so.cache was written")
}
