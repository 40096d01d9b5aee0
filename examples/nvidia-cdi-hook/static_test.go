//go:build !cgo

package main

import (
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-nvc/nvc/internal/testutil"
)

// moduleRoot is where the README's build command runs.
const moduleRoot = "../.."

// TestShippedHookIsStatic builds the hook with the README's command
// (CGO_ENABLED=0 go build ./examples/nvidia-cdi-hook, from the module root)
// and checks that the binary has no program interpreter and needs no
// shared library: no dynamic loader runs, so no LD_PRELOAD either. A
// build with cgo on must fail to compile, not produce a binary that
// refuses at run time (after an LD_PRELOAD constructor already ran).
func TestShippedHookIsStatic(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "nvidia-cdi-hook")
	testutil.GoBuild(t, moduleRoot, "./examples/nvidia-cdi-hook", bin, "CGO_ENABLED=0")
	f, err := elf.Open(bin)
	require.NoError(t, err)
	defer f.Close()
	for _, p := range f.Progs {
		assert.NotContains(t, []elf.ProgType{elf.PT_INTERP, elf.PT_DYNAMIC}, p.Type,
			"the shipped hook has a %v program header: a dynamic loader would run it", p.Type)
	}
	libs, err := f.ImportedLibraries()
	assert.NoError(t, err, "the shipped hook's shared libraries")
	assert.Empty(t, libs, "the shipped hook needs shared libraries")

	cgoBin := filepath.Join(t.TempDir(), "nvidia-cdi-hook-cgo")
	cmd := exec.Command(testutil.RequireCommand(t, "go"), "build", "-o", cgoBin, "./examples/nvidia-cdi-hook")
	cmd.Dir = moduleRoot
	cmd.Env = append(os.Environ(), "CGO_ENABLED=1")
	out, err := cmd.CombinedOutput()
	require.Error(t, err, "CGO_ENABLED=1 go build: want it refused by the build constraints\n%s", out)
	require.Contains(t, string(out), "build constraints exclude all Go files", "CGO_ENABLED=1 go build: want it refused by the build constraints")
	_, err = os.Stat(cgoBin)
	assert.Error(t, err, "CGO_ENABLED=1 go build wrote %s", cgoBin)
	t.Logf("CGO_ENABLED=1: %s", strings.TrimSpace(string(out)))
}

// TestEveryFileIsNotCgo checks the constraint that keeps a cgo build from
// compiling: a file without it would be the whole package under cgo.
func TestEveryFileIsNotCgo(t *testing.T) {
	files, err := filepath.Glob("*.go")
	require.NoError(t, err, "listing the package's files")
	require.NotEmpty(t, files, "listing the package's files")
	for _, f := range files {
		t.Run(f, func(t *testing.T) {
			b, err := os.ReadFile(f)
			require.NoError(t, err)
			assert.True(t, strings.HasPrefix(string(b), "//go:build !cgo\n"), "%s does not start with //go:build !cgo (see the package doc)", f)
		})
	}
}
