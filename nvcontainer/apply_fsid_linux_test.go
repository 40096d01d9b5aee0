package nvcontainer

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-nvc/nvc/internal/ns"
	"github.com/go-nvc/nvc/internal/rootfs"
	"github.com/go-nvc/nvc/internal/testutil"
)

// onDiscardedThread runs fn on a locked thread that is never unlocked, as
// Apply's confined thread: what fn changes of the thread dies with it.
func onDiscardedThread(fn func()) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		runtime.LockOSThread()
		fn()
	}()
	<-done
}

// TestActAs creates, after actAs, a file and a directory in a directory
// only root may write: both are born with the owner's ids (no chown), and
// the write succeeds because actAs put back the capabilities a change of
// the filesystem uid clears. The test's own thread keeps its ids.
func TestActAs(t *testing.T) {
	testutil.RequireRoot(t)
	dir := t.TempDir()
	require.NoError(t, os.Chmod(dir, 0o700))
	owner := &rootfs.Owner{UID: 100000, GID: 100001}
	var actErr, fileErr, dirErr error
	onDiscardedThread(func() {
		if actErr = actAs(owner); actErr != nil {
			return
		}
		fileErr = os.WriteFile(filepath.Join(dir, "file"), nil, 0o644)
		dirErr = os.Mkdir(filepath.Join(dir, "dir"), 0o755)
	})
	require.NoError(t, actErr, "actAs")
	require.NoError(t, fileErr, "creating a file in a 0700 root dir after actAs")
	require.NoError(t, dirErr, "creating a dir in a 0700 root dir after actAs")
	for _, name := range []string{"file", "dir"} {
		fi, err := os.Lstat(filepath.Join(dir, name))
		require.NoError(t, err)
		st := fi.Sys().(*syscall.Stat_t)
		assert.Equal(t, [2]uint32{100000, 100001}, [2]uint32{st.Uid, st.Gid}, "owner of %s created after actAs", name)
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "mine"), nil, 0o644))
	fi, err := os.Lstat(filepath.Join(dir, "mine"))
	require.NoError(t, err)
	assert.Equal(t, uint32(os.Geteuid()), fi.Sys().(*syscall.Stat_t).Uid, "a file the test's own thread creates")
}

func TestActAsNil(t *testing.T) {
	assert.NoError(t, actAs(nil))
}

// envInUserNS marks the child of TestRuntimeOwnsDevices that runs in a
// user namespace of its own.
const envInUserNS = "NVC_TEST_IN_USERNS"

// TestRuntimeOwnsDevices: a process in the initial user namespace adds
// device cgroup rules; the same test binary re-run in a user namespace
// (unshare --user --map-root-user: root there, as a rootless runtime's
// hook is) leaves them to the runtime, and Plan.DeviceRulesLeftToRuntime
// says so for a plan with rules (the CLI and the hook log it).
func TestRuntimeOwnsDevices(t *testing.T) {
	withRules := &Plan{CgroupRules: []DeviceRule{{Type: "c", Major: 195, Minor: 0, Access: "rw"}}}
	if os.Getenv(envInUserNS) == "1" {
		assert.True(t, runtimeOwnsDevices(), "in a user namespace")
		assert.True(t, withRules.DeviceRulesLeftToRuntime(), "a plan with rules, in a user namespace")
		assert.False(t, (&Plan{}).DeviceRulesLeftToRuntime(), "a plan without rules")
		return
	}
	data, err := os.ReadFile("/proc/self/uid_map")
	require.NoError(t, err)
	if !ns.IdentityMap(string(data)) {
		testutil.Unavailable(t, "the test runs in a user namespace already (uid_map %q)", data)
	}
	assert.False(t, runtimeOwnsDevices(), "in the initial user namespace")
	assert.False(t, withRules.DeviceRulesLeftToRuntime(), "a plan with rules, in the initial user namespace")
	unshare := testutil.RequireCommand(t, "unshare")
	cmd := exec.Command(unshare, "--user", "--map-root-user", os.Args[0], "-test.run=^TestRuntimeOwnsDevices$", "-test.v")
	cmd.Env = append(os.Environ(), envInUserNS+"=1")
	out, err := cmd.CombinedOutput()
	if err != nil && strings.Contains(string(out), "unshare failed") {
		testutil.Unavailable(t, "cannot make a user namespace: %s", out)
	}
	require.NoError(t, err, "the child in a user namespace:\n%s", out)
	assert.Contains(t, string(out), "--- PASS: TestRuntimeOwnsDevices", "the child in a user namespace:\n%s", out)
}
