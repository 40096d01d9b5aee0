package main

import (
	"debug/elf"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-nvc/nvc/internal/testutil"
)

// buildHook builds this program with CGO_ENABLED=cgo and returns the
// binary.
func buildHook(t *testing.T, cgo string) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "nvidia-cdi-hook")
	testutil.GoBuild(t, ".", ".", out, "CGO_ENABLED="+cgo)
	return out
}

// dynamic reports whether the ELF file has a program interpreter (a
// dynamic loader that honours LD_PRELOAD).
func dynamic(t *testing.T, file string) bool {
	t.Helper()
	return testutil.HasProg(t, file, elf.PT_INTERP)
}

// A build with cgo (the go command's default where a C compiler is
// found) refuses to run, reading its stdin first; CGO_ENABLED=0 gives a
// static binary that runs.
func TestCgoBuildRefuses(t *testing.T) {
	testutil.RequireCommand(t, "gcc") // cgo is only on with a C compiler
	for _, tc := range []struct {
		cgo    string
		code   int
		stderr string
	}{
		{"1", 1, cgoRefusal + "\n"},
		{"0", 0, ""},
	} {
		bin := buildHook(t, tc.cgo)
		cmd := exec.Command(bin, "noop")
		cmd.Stdin = strings.NewReader(`{"bundle":"/x","root":"/r"}`)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		err := cmd.Run()
		if code := cmd.ProcessState.ExitCode(); code != tc.code || stderr.String() != tc.stderr {
			t.Errorf("CGO_ENABLED=%s: exit %d (%v), stderr %q; want %d, %q", tc.cgo, code, err, stderr.String(), tc.code, tc.stderr)
		}
		if tc.cgo == "0" && dynamic(t, bin) {
			t.Errorf("CGO_ENABLED=0: the binary is dynamically linked")
		}
		t.Logf("CGO_ENABLED=%s: dynamically linked: %v", tc.cgo, dynamic(t, bin))
	}
}
