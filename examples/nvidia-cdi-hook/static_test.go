//go:build !cgo

package main

import (
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

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
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP || p.Type == elf.PT_DYNAMIC {
			t.Errorf("the shipped hook has a %v program header: a dynamic loader would run it", p.Type)
		}
	}
	if libs, err := f.ImportedLibraries(); err != nil || len(libs) > 0 {
		t.Errorf("the shipped hook needs shared libraries %q (%v)", libs, err)
	}

	cgoBin := filepath.Join(t.TempDir(), "nvidia-cdi-hook-cgo")
	cmd := exec.Command(testutil.RequireCommand(t, "go"), "build", "-o", cgoBin, "./examples/nvidia-cdi-hook")
	cmd.Dir = moduleRoot
	cmd.Env = append(os.Environ(), "CGO_ENABLED=1")
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "build constraints exclude all Go files") {
		t.Fatalf("CGO_ENABLED=1 go build: %v, want it refused by the build constraints\n%s", err, out)
	}
	if _, err := os.Stat(cgoBin); err == nil {
		t.Errorf("CGO_ENABLED=1 go build wrote %s", cgoBin)
	}
	t.Logf("CGO_ENABLED=1: %s", strings.TrimSpace(string(out)))
}

// TestEveryFileIsNotCgo checks the constraint that keeps a cgo build from
// compiling: a file without it would be the whole package under cgo.
func TestEveryFileIsNotCgo(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil || len(files) == 0 {
		t.Fatalf("listing the package's files: %v", err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(string(b), "//go:build !cgo\n") {
			t.Errorf("%s does not start with //go:build !cgo (see the package doc)", f)
		}
	}
}
