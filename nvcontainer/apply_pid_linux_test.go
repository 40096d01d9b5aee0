package nvcontainer

import (
	"context"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-nvc/nvc/internal/testutil"
)

// The container's PID comes from an OCI state, which anyone who can write
// one (or a hook registered at the wrong stage: crun gives createContainer
// hooks pid 0) controls. These tests give Apply pids that are not a
// container's process and check it refuses them with ErrInvalidPID before
// changing anything: no mount appears below the rootfs in this (the host's)
// mount namespace, and a devices cgroup keeps its rules.

// hostChild starts prog in this mount namespace (a host process), or in a
// new private one, and kills and reaps it when the test ends.
func hostChild(t *testing.T, newNS bool, prog string, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(testutil.RequireCommand(t, prog), args...)
	if newNS {
		cmd.SysProcAttr = &syscall.SysProcAttr{Unshareflags: syscall.CLONE_NEWNS} // Go makes / rprivate
	}
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	return cmd
}

// zombie starts a child that exits at once and is not reaped until the
// test ends.
func zombie(t *testing.T) int {
	t.Helper()
	pid := hostChild(t, false, "true").Process.Pid
	stat := filepath.Join("/proc", strconv.Itoa(pid), "stat")
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if b, err := os.ReadFile(stat); err == nil && strings.Contains(string(b), ") Z ") {
			return pid
		}
	}
	require.Failf(t, "no zombie", "child %d did not become a zombie", pid)
	return 0
}

func pidMax(t *testing.T) int {
	t.Helper()
	n, err := readInt("/proc/sys/kernel/pid_max")
	require.NoError(t, err)
	return n
}

// refuses applies p to ctr and checks the refusal: ErrInvalidPID, an
// error naming the pid and saying why, no mount below the rootfs here.
// On the code before this check some of these mounted the driver on the
// host; those mounts are taken off when the test ends.
func refuses(t *testing.T, p *Plan, ctr Container, why string) {
	t.Helper()
	t.Cleanup(func() { unmountBelow(t, ctr.Rootfs) })
	before := testutil.MountsBelow(t, ctr.Rootfs)
	err := p.Apply(context.Background(), ctr, nil)
	if assert.ErrorIs(t, err, ErrInvalidPID, "Apply(pid %d); want ErrInvalidPID naming the pid and saying %q", ctr.PID, why) {
		assert.ErrorContains(t, err, "container pid "+strconv.Itoa(ctr.PID)+": ", "Apply(pid %d), want an error naming the pid", ctr.PID)
		assert.ErrorContains(t, err, why, "Apply(pid %d), want an error saying why", ctr.PID)
	}
	after := testutil.MountsBelow(t, ctr.Rootfs)
	assert.Equal(t, before, after, "Apply(pid %d) left %d mounts on the host below the rootfs (before: %d)", ctr.PID, len(after), len(before))
}

// TestApplyRefusesHostPIDs: with no cgroup rules (no-cgroups = true), pid
// 0, this test's own pid and a host `sleep` would have Apply work in this
// mount namespace, mounting the driver on the host at the rootfs path; a
// zombie and pids beyond pid_max are no process at all.
func TestApplyRefusesHostPIDs(t *testing.T) {
	h := newTestHost(t)
	p := h.testPlan(t, debianLayout, 2)
	p.CgroupRules = nil
	sleep := hostChild(t, false, "sleep", "1000").Process.Pid
	for _, tc := range []struct {
		name string
		pid  int
		mode Mode
		why  string
	}{
		{"pid 0", 0, ModeProcess, "names no process"},
		{"own pid", os.Getpid(), ModeProcess, "shares the caller's mount namespace"},
		{"host sleep", sleep, ModeProcess, "shares the caller's mount namespace"},
		{"zombie", zombie(t), ModeProcess, "zombie"},
		{"above pid_max", pidMax(t) + 1, ModeProcess, "container pid"},
		{"pid_max, no such process", pidMax(t), ModeProcess, "container pid"},
		{"negative", -1, ModeProcess, "out of range"},
		{"standalone, zombie", zombie(t), ModeStandalone, "zombie"},
		{"standalone, other namespace", hostChild(t, true, "sleep", "1000").Process.Pid, ModeStandalone, "not in the caller's mount namespace"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			refuses(t, p, Container{PID: tc.pid, Rootfs: newRootfs(t, debianLayout), Mode: tc.mode}, tc.why)
		})
	}
}

// TestApplyRefusesHostCgroup: with cgroup rules, a host process's pid
// would also get the GPUs allowed in its own devices cgroup; its
// devices.list must stay as it was.
func TestApplyRefusesHostCgroup(t *testing.T) {
	h := newTestHost(t)
	p := h.testPlan(t, debianLayout, 2)
	cg := newDevicesCgroup(t)
	sleep := hostChild(t, false, "sleep", "1000").Process.Pid
	cg.write(t, "cgroup.procs", strconv.Itoa(sleep))
	before := cg.list(t)
	refuses(t, p, Container{PID: sleep, Rootfs: newRootfs(t, debianLayout)}, "shares the caller's mount namespace")
	assert.Equal(t, before, cg.list(t), "devices.list of the host process's cgroup changed")
}

// TestApplyPIDExitsMidway: the container's process exits (and is reaped)
// right after Apply pinned it, before the cgroup is read: Apply reads the
// cgroup through the pinned /proc/PID directory, not by the number the
// next process may get, and refuses; the cgroup and the host's mounts are
// unchanged.
func TestApplyPIDExitsMidway(t *testing.T) {
	h := newTestHost(t)
	p := h.testPlan(t, debianLayout, 2)
	cg := newDevicesCgroup(t)
	child := hostChild(t, true, "sleep", "1000")
	cg.write(t, "cgroup.procs", strconv.Itoa(child.Process.Pid))
	before := cg.list(t)
	rootfs := newRootfs(t, debianLayout)
	killed := false
	opts := &ApplyOptions{fault: func(step Step, _ string) error {
		if step == StepOpen && !killed {
			killed = true
			child.Process.Kill()
			child.Wait()
		}
		return nil
	}}
	err := p.Apply(context.Background(), Container{PID: child.Process.Pid, Rootfs: rootfs}, opts)
	assert.True(t, killed, "Apply = %v without reaching %s: the process was not killed", err, StepOpen)
	if assert.ErrorIs(t, err, ErrInvalidPID, "Apply with the process gone after pinning; want ErrInvalidPID naming the pid") {
		assert.ErrorContains(t, err, "container pid "+strconv.Itoa(child.Process.Pid)+": ", "Apply with the process gone after pinning; want ErrInvalidPID naming the pid")
	}
	assert.Equal(t, before, cg.list(t), "devices.list changed")
	assert.Empty(t, testutil.MountsBelow(t, rootfs), "mounts on the host below the rootfs")
}

// TestApplyPIDRacer kills the container's process (in its own private
// mount namespace) at a random moment while Apply runs, 30 times: Apply
// either refuses with ErrInvalidPID (the process was gone before it was
// pinned) or finishes in the process's namespace, which it holds open;
// never does a mount appear on the host.
func TestApplyPIDRacer(t *testing.T) {
	h := newTestHost(t)
	p := h.testPlan(t, debianLayout, 2)
	p.CgroupRules = nil
	rootfs := newRootfs(t, debianLayout)
	t.Cleanup(func() { unmountBelow(t, rootfs) })
	deadline := time.Now().Add(20 * time.Second)
	refused, done := 0, 0
	for i := 0; i < 30 && time.Now().Before(deadline); i++ {
		child := hostChild(t, true, "sleep", "1000")
		delay := time.Duration(rand.IntN(300)) * time.Microsecond
		go func() {
			time.Sleep(delay)
			child.Process.Kill()
		}()
		err := p.Apply(context.Background(), Container{PID: child.Process.Pid, Rootfs: rootfs}, nil)
		if err == nil {
			done++
		} else if assert.ErrorIs(t, err, ErrInvalidPID, "round %d (kill after %v); want nil or ErrInvalidPID", i, delay) {
			refused++
		}
		require.Empty(t, testutil.MountsBelow(t, rootfs), "round %d (kill after %v): mounts on the host below the rootfs", i, delay)
		child.Wait()
	}
	t.Logf("%d applied before the kill, %d refused", done, refused)
}

// TestCheckContainer: what Apply refuses, CheckContainer (which a hook
// calls before planning) refuses with the same sentinel; a container's
// process and rootfs-only mode pass.
func TestCheckContainer(t *testing.T) {
	testutil.RequireRoot(t)
	c := startIn(t, debianLayout, false)
	for _, tc := range []struct {
		name string
		ctr  Container
		ok   bool
	}{
		{"container process", Container{PID: c.PID, Rootfs: "/r"}, true},
		{"rootfs-only", Container{Rootfs: "/r", Mode: ModeRootfsOnly}, true},
		{"pid 0", Container{Rootfs: "/r"}, false},
		{"own pid", Container{PID: os.Getpid(), Rootfs: "/r"}, false},
		{"standalone, other namespace", Container{PID: c.PID, Rootfs: "/r", Mode: ModeStandalone}, false},
		{"rootfs-only with a pid", Container{PID: c.PID, Rootfs: "/r", Mode: ModeRootfsOnly}, false},
		{"above pid_max", Container{PID: pidMax(t) + 1, Rootfs: "/r"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckContainer(tc.ctr, "")
			if tc.ok {
				assert.NoError(t, err, "CheckContainer(%+v)", tc.ctr)
				return
			}
			require.ErrorIs(t, err, ErrInvalidPID, "CheckContainer(%+v); want ErrInvalidPID naming the pid", tc.ctr)
			assert.True(t, strings.HasPrefix(err.Error(), "container pid "), "CheckContainer(%+v) = %v; want ErrInvalidPID naming the pid", tc.ctr, err)
		})
	}
}

// envStandalone makes TestApplyStandalone's child do the work.
const envStandalone = "NVC_APPLY_STANDALONE"

// TestApplyStandalone: in ModeStandalone the caller is inside the
// container's mount namespace and the PID is a process there (here the
// test binary itself, run by unshare(1) in a private mount namespace, as
// an LXC hook runs in the container's): Apply works there, device rules
// and all.
func TestApplyStandalone(t *testing.T) {
	testutil.RequireRoot(t)
	if os.Getenv(envStandalone) == "1" {
		h := newTestHost(t)
		p := h.testPlan(t, debianLayout, 2)
		dir := newRootfs(t, debianLayout)
		t.Cleanup(func() { unmountBelow(t, dir) })
		require.NoError(t, p.Apply(context.Background(), Container{PID: os.Getpid(), Rootfs: dir, Mode: ModeStandalone}, nil))
		n := len(testutil.MountsBelow(t, dir))
		assert.GreaterOrEqual(t, n, mountCount(p), "%d mounts below the rootfs, want at least %d", n, mountCount(p))
		return
	}
	unshare := testutil.RequireCommand(t, "unshare")
	cmd := exec.Command(unshare, "--mount", "--propagation", "private", os.Args[0], "-test.run=^TestApplyStandalone$", "-test.v")
	cmd.Env = append(os.Environ(), envStandalone+"=1")
	out, err := cmd.CombinedOutput()
	assert.NoError(t, err, "child:\n%s", out)
	assert.Contains(t, string(out), "--- PASS: TestApplyStandalone", "child")
}
