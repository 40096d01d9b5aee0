package testutil

import (
	"debug/elf"
	"os"
	"os/exec"
	"testing"
)

// GoBuild builds the Go package pkg (as the go command names it, relative
// to dir) into the file out, with env added to the environment (such as
// "CGO_ENABLED=0"). Without the go command tb is [Unavailable].
func GoBuild(tb testing.TB, dir, pkg, out string, env ...string) {
	tb.Helper()
	cmd := exec.Command(RequireCommand(tb, "go"), "build", "-o", out, pkg)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	if b, err := cmd.CombinedOutput(); err != nil {
		tb.Fatalf("%s go build %s: %v\n%s", env, pkg, err, b)
	}
}

// HasProg reports whether the ELF file has a program header of type typ:
// PT_INTERP for a program a dynamic loader runs (and LD_PRELOAD reaches),
// PT_DYNAMIC for anything dynamically linked.
func HasProg(tb testing.TB, file string, typ elf.ProgType) bool {
	tb.Helper()
	f, err := elf.Open(file)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == typ {
			return true
		}
	}
	return false
}
