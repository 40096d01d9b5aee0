package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

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
	code := run(append([]string{"nvidia-container-cli"}, args...), &stdout, &stderr)
	entries, err := os.ReadDir(tmp)
	require.NoError(t, err)
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
	assert.Equal(t, 0, code, "info: exit status\n%s", stderr)
	assert.Empty(t, left, "info: left in TMPDIR\n%s", stderr)
	code, stderr, left = runSim(t, "--simulate=dgxa100", "--simulate-keep", "list")
	assert.Equal(t, 0, code, "list --simulate-keep: exit status\n%s", stderr)
	if assert.Len(t, left, 1, "list --simulate-keep: want one nvctest-dgxa100- dir\n%s", stderr) {
		assert.True(t, strings.HasPrefix(left[0], "nvctest-dgxa100-"), "list --simulate-keep: left %q, want one nvctest-dgxa100- dir", left)
	}
	assert.Contains(t, stderr, "kept", "list --simulate-keep: stderr does not say the host is kept")
	testutil.RequireRoot(t) // configure refuses to start without root
	// A container whose /usr is a file: the plan is made, Apply fails
	// creating the library directories and undoes its work.
	c := container.Start(t, nil)
	require.NoError(t, os.WriteFile(filepath.Join(c.HostRootfs, "usr"), nil, 0o644))
	code, stderr, left = runSim(t, "--simulate=dgxa100", "configure", "--pid="+strconv.Itoa(c.PID), "--no-cgroups",
		"--device=0", "--compute", "--utility", c.Rootfs)
	t.Logf("configure: %s", stderr)
	assert.NotEqual(t, 0, code, "failed configure: exit status\n%s", stderr)
	assert.Empty(t, left, "failed configure: left in TMPDIR\n%s", stderr)
}
