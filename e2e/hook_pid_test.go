//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/opencontainers/runtime-spec/specs-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/go-nvc/nvc/internal/testutil"
)

// The OCI state's pid is not trusted. A forged state, or a hook registered
// at the wrong stage (crun gives createContainer hooks pid 0), used to make
// the runtime hook work in its own mount namespace: with no-cgroups = true
// the driver was mounted on the host at the rootfs path and stayed there.

// unmountAllBelow takes off what a hook that trusted the pid left on the
// host below dir, topmost first.
func unmountAllBelow(t *testing.T, dir string) {
	mounts := testutil.MountsBelow(t, dir)
	for i := len(mounts) - 1; i >= 0; i-- {
		unix.Unmount(mounts[i], unix.MNT_DETACH)
	}
}

// startHostChild starts prog as a host process; it is killed and reaped
// when the test ends.
func startHostChild(t *testing.T, prog string, args ...string) int {
	t.Helper()
	cmd := exec.Command(testutil.RequireCommand(t, prog), args...)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	return cmd.Process.Pid
}

// zombiePID is a child that has exited and is not reaped before the test
// ends.
func zombiePID(t *testing.T) int {
	t.Helper()
	pid := startHostChild(t, "true")
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid)); err == nil && strings.Contains(string(b), ") Z ") {
			return pid
		}
	}
	require.FailNow(t, fmt.Sprintf("child %d did not become a zombie", pid))
	return 0
}

// TestHookRefusesForgedPID feeds nvidia-container-runtime-hook prestart,
// configured with no-cgroups = true, states whose pid is not a container's
// process: 0, this test process (the hook's parent, on the host), a host
// sleep, a zombie, and pid_max+1. Each must fail naming the pid, and no
// mount may appear on the host below the rootfs.
func TestHookRefusesForgedPID(t *testing.T) {
	testutil.RequireRoot(t)
	fh := simHost(t, nil)
	config := hookConfig(t, fh, []string{"no-cgroups = true"})
	b, err := os.ReadFile("/proc/sys/kernel/pid_max")
	require.NoError(t, err)
	pidMax, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	for _, tc := range []struct {
		name string
		pid  int
		why  string
	}{
		{"pid 0", 0, "names no process"},
		{"the hook's parent", os.Getpid(), "shares the caller's mount namespace"},
		{"host sleep", startHostChild(t, "sleep", "1000"), "shares the caller's mount namespace"},
		{"zombie", zombiePID(t), "zombie"},
		{"above pid_max", pidMax + 1, "container pid"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rootfs := busyboxRootfs(t)
			bundle := newBundle(t, rootfs, "true", gpuEnv, nil)
			t.Cleanup(func() { unmountAllBelow(t, rootfs) })
			state := fmt.Sprintf(`{"ociVersion":"1.0.2","id":"forged","status":"created","pid":%d,"bundle":%q}`, tc.pid, bundle)
			_, stderr, code := hook(t, state, "-config", config, "prestart")
			want := fmt.Sprintf("container pid %d: ", tc.pid)
			assert.Equal(t, 1, code, "hook with pid %d: exit status; stderr %q", tc.pid, stderr)
			for _, s := range []string{want, tc.why, "invalid container pid"} {
				assert.Contains(t, stderr, s, "hook with pid %d: want an error with %q and %q", tc.pid, want, tc.why)
			}
			assert.Empty(t, testutil.MountsBelow(t, rootfs), "hook with pid %d left mounts on the host below the rootfs", tc.pid)
		})
	}
}

// TestHookAtCreateContainer registers the runtime hook at the wrong stage,
// createContainer, under runc and crun with no-cgroups = true. Such a hook
// runs in the container's mount namespace; crun gives it pid 0, runc the
// container's pid (whose namespace is then the hook's own). The hook must
// refuse both — it cannot tell that namespace from the host's — so the
// container does not start, the hook's log names the pid, and no mount
// appears on the host below the rootfs.
func TestHookAtCreateContainer(t *testing.T) {
	for _, name := range []string{"runc", "crun"} {
		t.Run(name, func(t *testing.T) {
			rt := requireRuntime(t, name)
			fh := simHost(t, nil)
			logFile := filepath.Join(t.TempDir(), "hook.log")
			config := hookConfig(t, fh, []string{"no-cgroups = true", "debug = " + quote(logFile)})
			hookBin := buildExample(t, "nvidia-container-runtime-hook", false)
			rootfs := busyboxRootfs(t)
			t.Cleanup(func() { unmountAllBelow(t, rootfs) })
			hooks := &specs.Hooks{CreateContainer: []specs.Hook{ourHook(hookBin, config, "prestart")}}
			bundle := newBundle(t, rootfs, probeScript, gpuEnv, hooks)
			before := testutil.MountsBelow(t, rootfs)
			out, stderr, code := rt.run(t, bundle, strings.ToLower(testName(t)), "", "")
			log, _ := os.ReadFile(logFile)
			const msg = "%s run with the hook at createContainer: exit %d, stdout %q, stderr %q, hook log %q; want a refused pid and no container"
			assert.NotEqual(t, 0, code, msg, name, code, out, stderr, log)
			assert.Contains(t, string(log), "invalid container pid", msg, name, code, out, stderr, log)
			t.Logf("hook log: %s", log)
			after := testutil.MountsBelow(t, rootfs)
			assert.True(t, slices.Equal(before, after), "mounts on the host below the rootfs: %v", after)
		})
	}
}
