package testutil

import (
	"debug/elf"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-nvc/nvc/internal/elfwriter"
)

// GoBuild with CGO_ENABLED=0 gives a program without PT_INTERP or
// PT_DYNAMIC that runs; an elfwriter executable has PT_INTERP.
func TestGoBuildHasProg(t *testing.T) {
	dir := Tree(t, "file go.mod \"module x\\n\"\nfile main.go \"package main\\nfunc main() {}\\n\"\n")
	out := filepath.Join(t.TempDir(), "x")
	GoBuild(t, dir, ".", out, "CGO_ENABLED=0")
	output, err := exec.Command(out).CombinedOutput()
	require.NoError(t, err, "running the build:\n%s", output)
	for _, typ := range []elf.ProgType{elf.PT_INTERP, elf.PT_DYNAMIC} {
		assert.False(t, HasProg(t, out, typ), "CGO_ENABLED=0 build has %v", typ)
	}
	assert.True(t, HasProg(t, out, elf.PT_LOAD), "CGO_ENABLED=0 build has no PT_LOAD")
	exe := filepath.Join(t.TempDir(), "exe")
	require.NoError(t, elfwriter.WriteFile(exe, &elfwriter.Object{Interp: HostLoader}, 0o755))
	assert.True(t, HasProg(t, exe, elf.PT_INTERP), "elfwriter executable with Interp has no PT_INTERP")
}
