package testutil

import (
	"debug/elf"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/go-nvc/nvc/internal/elfwriter"
)

// GoBuild with CGO_ENABLED=0 gives a program without PT_INTERP or
// PT_DYNAMIC that runs; an elfwriter executable has PT_INTERP.
func TestGoBuildHasProg(t *testing.T) {
	dir := Tree(t, "file go.mod \"module x\\n\"\nfile main.go \"package main\\nfunc main() {}\\n\"\n")
	out := filepath.Join(t.TempDir(), "x")
	GoBuild(t, dir, ".", out, "CGO_ENABLED=0")
	if out, err := exec.Command(out).CombinedOutput(); err != nil {
		t.Fatalf("running the build: %v\n%s", err, out)
	}
	for _, typ := range []elf.ProgType{elf.PT_INTERP, elf.PT_DYNAMIC} {
		if HasProg(t, out, typ) {
			t.Errorf("CGO_ENABLED=0 build has %v", typ)
		}
	}
	if !HasProg(t, out, elf.PT_LOAD) {
		t.Errorf("CGO_ENABLED=0 build has no PT_LOAD")
	}
	exe := filepath.Join(t.TempDir(), "exe")
	if err := elfwriter.WriteFile(exe, &elfwriter.Object{Interp: HostLoader}, 0o755); err != nil {
		t.Fatal(err)
	}
	if !HasProg(t, exe, elf.PT_INTERP) {
		t.Errorf("elfwriter executable with Interp has no PT_INTERP")
	}
}
