//go:build e2e

package e2e

import (
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/go-nvc/nvc/internal/testutil"
)

// The LD_PRELOAD (CVE-2025-23266, "NVIDIAScape") fixtures: a shared object
// whose constructor records which program loaded it, and the container
// environment that points the loader at it.

// preloadSource is the library's C source. Its constructor writes a file
// "nvc-preload-ran.<pid>" holding /proc/self/exe's target into the current
// directory: the container's "/" for a container process, and the rootfs
// too for a runtime hook (runc starts hooks in the rootfs, which is what
// made /proc/self/cwd/… work as the exploit's path).
const preloadSource = `#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

__attribute__((constructor)) static void nvc_mark(void) {
	char exe[512] = "?", name[64];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	if (n >= 0)
		exe[n] = 0;
	snprintf(name, sizeof name, "nvc-preload-ran.%d", (int)getpid());
	int fd = open(name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd >= 0) {
		write(fd, exe, strlen(exe));
		close(fd);
	}
}
`

// preloadName is the library's file name in the rootfs; preloadEnv is the
// container environment of the exploit, resolving to it both inside the
// container and in a hook whose working directory is the rootfs.
const (
	preloadName = "nvc-preload.so"
	preloadEnv  = "LD_PRELOAD=/proc/self/cwd/" + preloadName
)

// addPreloadLibrary compiles the library with gcc into rootfs/preloadName.
func addPreloadLibrary(t *testing.T, rootfs string) {
	t.Helper()
	gcc := testutil.RequireCommand(t, "gcc")
	src := filepath.Join(t.TempDir(), "preload.c")
	require.NoError(t, os.WriteFile(src, []byte(preloadSource), 0o644))
	out := filepath.Join(rootfs, preloadName)
	b, err := exec.Command(gcc, "-shared", "-fPIC", "-O2", "-o", out, src).CombinedOutput()
	require.NoError(t, err, "building %s: %s", preloadName, b)
}

// preloadRuns returns the programs (their /proc/self/exe) that ran the
// library's constructor in rootfs, sorted, and removes the markers.
func preloadRuns(t *testing.T, rootfs string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(rootfs, "nvc-preload-ran.*"))
	require.NoError(t, err)
	var exes []string
	for _, f := range files {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		exes = append(exes, string(b))
		os.Remove(f)
	}
	slices.Sort(exes)
	return exes
}

// dynamicProgram returns a host program that is dynamically linked (it
// has a PT_INTERP), to stand for a hook a loader honours LD_PRELOAD in.
// canaryArgs run a canary hook (dd, dynamically linked) that reads the
// state the runtime writes to its stdin to the end: a hook that exits
// first (true, sleep 0) makes crun fail with "writing to pipe: Broken pipe"
// whenever it wins the race.
var canaryArgs = []string{"dd", "if=/dev/stdin", "of=/dev/null", "status=none"}

func dynamicProgram(t *testing.T, name string) string {
	t.Helper()
	p := testutil.RequireCommand(t, name)
	if !testutil.HasProg(t, p, elf.PT_INTERP) {
		testutil.Unavailable(t, "%s is not dynamically linked", p)
	}
	return p
}

func hasSuffixIn(list []string, suffix string) bool {
	return slices.ContainsFunc(list, func(s string) bool { return strings.HasSuffix(s, suffix) })
}
