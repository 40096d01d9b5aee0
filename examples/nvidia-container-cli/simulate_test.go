package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/go-nvc/nvc/internal/testutil"
	"github.com/go-nvc/nvc/internal/testutil/container"
)

// runSim runs the program with TMPDIR at a new dir and returns its exit
// status, its stderr and what is left in that dir.
func runSim(t *testing.T, args ...string) (int, string, []string) {
	t.Helper()
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	var stdout, stderr bytes.Buffer
	code := run(args, &stdout, &stderr)
	entries, err := os.ReadDir(tmp)
	if err != nil {
		t.Fatal(err)
	}
	var left []string
	for _, e := range entries {
		left = append(left, e.Name())
	}
	return code, stderr.String(), left
}

// TestSimulateLeavesNothing: the generated host of --simulate is removed
// after info and list, and after a configure that fails in Apply (it was
// kept as soon as Apply started); --simulate-keep keeps it.
func TestSimulateLeavesNothing(t *testing.T) {
	code, stderr, left := runSim(t, "--simulate=dgxa100", "info")
	if code != 0 || len(left) > 0 {
		t.Errorf("info: exit %d, left %q\n%s", code, left, stderr)
	}
	code, stderr, left = runSim(t, "--simulate=dgxa100", "--simulate-keep", "list")
	if code != 0 || len(left) != 1 || !strings.HasPrefix(left[0], "nvctest-dgxa100-") || !strings.Contains(stderr, "kept") {
		t.Errorf("list --simulate-keep: exit %d, left %q, want one nvctest-dgxa100- dir\n%s", code, left, stderr)
	}
	testutil.RequireRoot(t) // configure refuses to start without root
	// A container whose /usr is a file: the plan is made, Apply fails
	// creating the library directories and undoes its work.
	c := container.Start(t, nil)
	if err := os.WriteFile(filepath.Join(c.HostRootfs, "usr"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	code, stderr, left = runSim(t, "--simulate=dgxa100", "configure", "--pid="+strconv.Itoa(c.PID), "--no-cgroups",
		"--device=0", "--compute", "--utility", c.Rootfs)
	t.Logf("configure: %s", stderr)
	if code == 0 || len(left) > 0 {
		t.Errorf("failed configure: exit %d, left %q\n%s", code, left, stderr)
	}
}
