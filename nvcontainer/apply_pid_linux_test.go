package nvcontainer

import (
	"context"
	"errors"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

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
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
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
	t.Fatalf("child %d did not become a zombie", pid)
	return 0
}

func pidMax(t *testing.T) int {
	t.Helper()
	n, err := readInt("/proc/sys/kernel/pid_max")
	if err != nil {
		t.Fatal(err)
	}
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
	if !errors.Is(err, ErrInvalidPID) || !strings.Contains(err.Error(), "container pid "+strconv.Itoa(ctr.PID)+": ") ||
		!strings.Contains(err.Error(), why) {
		t.Errorf("Apply(pid %d) = %v; want ErrInvalidPID naming the pid and saying %q", ctr.PID, err, why)
	}
	if after := testutil.MountsBelow(t, ctr.Rootfs); !slices.Equal(before, after) {
		t.Errorf("Apply(pid %d) left %d mounts on the host below the rootfs (before: %d): %v", ctr.PID, len(after), len(before), after)
	}
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
	if after := cg.list(t); after != before {
		t.Errorf("devices.list of the host process's cgroup changed:\nbefore %q\nafter  %q", before, after)
	}
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
	if !killed || !errors.Is(err, ErrInvalidPID) || !strings.Contains(err.Error(), "container pid "+strconv.Itoa(child.Process.Pid)+": ") {
		t.Errorf("Apply with the process gone after pinning = %v; want ErrInvalidPID naming the pid", err)
	}
	if after := cg.list(t); after != before {
		t.Errorf("devices.list changed:\nbefore %q\nafter  %q", before, after)
	}
	if m := testutil.MountsBelow(t, rootfs); len(m) > 0 {
		t.Errorf("mounts on the host below the rootfs: %v", m)
	}
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
		switch {
		case err == nil:
			done++
		case errors.Is(err, ErrInvalidPID):
			refused++
		default:
			t.Errorf("round %d (kill after %v): %v; want nil or ErrInvalidPID", i, delay, err)
		}
		if m := testutil.MountsBelow(t, rootfs); len(m) > 0 {
			t.Fatalf("round %d (kill after %v): mounts on the host below the rootfs: %v", i, delay, m)
		}
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
		ctr Container
		ok  bool
	}{
		{Container{PID: c.PID, Rootfs: "/r"}, true},
		{Container{Rootfs: "/r", Mode: ModeRootfsOnly}, true},
		{Container{Rootfs: "/r"}, false},
		{Container{PID: os.Getpid(), Rootfs: "/r"}, false},
		{Container{PID: c.PID, Rootfs: "/r", Mode: ModeStandalone}, false},
		{Container{PID: c.PID, Rootfs: "/r", Mode: ModeRootfsOnly}, false},
		{Container{PID: pidMax(t) + 1, Rootfs: "/r"}, false},
	} {
		err := CheckContainer(tc.ctr, "")
		if tc.ok != (err == nil) || (err != nil && (!errors.Is(err, ErrInvalidPID) || !strings.HasPrefix(err.Error(), "container pid "))) {
			t.Errorf("CheckContainer(%+v) = %v; want ok %v, else ErrInvalidPID naming the pid", tc.ctr, err, tc.ok)
		}
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
		if err := p.Apply(context.Background(), Container{PID: os.Getpid(), Rootfs: dir, Mode: ModeStandalone}, nil); err != nil {
			t.Fatal(err)
		}
		if n := len(testutil.MountsBelow(t, dir)); n < mountCount(p) {
			t.Errorf("%d mounts below the rootfs, want at least %d", n, mountCount(p))
		}
		return
	}
	unshare := testutil.RequireCommand(t, "unshare")
	cmd := exec.Command(unshare, "--mount", "--propagation", "private", os.Args[0], "-test.run=^TestApplyStandalone$", "-test.v")
	cmd.Env = append(os.Environ(), envStandalone+"=1")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: TestApplyStandalone") {
		t.Errorf("child: %v\n%s", err, out)
	}
}
