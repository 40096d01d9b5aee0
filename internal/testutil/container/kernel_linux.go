package container

import (
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/go-nvc/nvc/internal/testutil"
)

// envChild names the test a re-exec'd child runs as itself.
const envChild = "NVC_TESTUTIL_CHILD"

// envPrivateNS names the test a child re-exec'd by InPrivateMountNS runs
// as itself.
const envPrivateNS = "NVC_TESTUTIL_PRIVATE_NS"

// InChild re-runs the calling top-level test in a child process of the
// test binary and reports whether the caller is that child. The parent
// fails if the child fails and shows its output. Use it for tests that
// change process-wide state, such as [DenySyscalls]:
//
//	if !container.InChild(t) {
//		return
//	}
//	// in the child from here on
func InChild(t *testing.T) bool {
	t.Helper()
	if os.Getenv(envChild) == t.Name() {
		return true
	}
	reexec(t, envChild)
	return false
}

// InPrivateMountNS is [InChild] with the child in a mount namespace of its
// own (unshare --mount --propagation private), for tests that compare
// /proc/self/mountinfo before and after their work: the child sees only
// its own mounts, not those other packages' tests (a runtime, podman)
// make on the host meanwhile. It needs root and unshare(1).
func InPrivateMountNS(t *testing.T) bool {
	t.Helper()
	if os.Getenv(envPrivateNS) == t.Name() {
		return true
	}
	testutil.RequireRoot(t)
	reexec(t, envPrivateNS, testutil.RequireCommand(t, "unshare"), "--mount", "--propagation", "private")
	return false
}

// reexec runs the calling top-level test in a child of the test binary
// (started through prefix, if any) with env naming it, fails t if the
// child fails, skips t (through the gate) if the child skipped, and
// passes on the child's test log lines.
func reexec(t *testing.T, env string, prefix ...string) {
	t.Helper()
	args := append(prefix, os.Args[0], "-test.run=^"+regexp.QuoteMeta(t.Name())+"$", "-test.v")
	if testing.Short() {
		args = append(args, "-test.short")
	}
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Env = append(os.Environ(), env+"="+t.Name())
	out, err := cmd.CombinedOutput()
	if err == nil && strings.Contains(string(out), "--- SKIP: "+t.Name()+" (") {
		testutil.Unavailable(t, "child %s skipped:\n%s", t.Name(), out)
	}
	if err != nil || !strings.Contains(string(out), "--- PASS: "+t.Name()) {
		t.Errorf("child %s did not pass: %v\n%s", t.Name(), err, out)
		return
	}
	for _, l := range strings.Split(string(out), "\n") {
		if strings.Contains(l, "_test.go:") {
			t.Log(strings.TrimSpace(l))
		}
	}
}

// DenySyscalls makes the given system calls fail with ENOSYS in every
// thread of this process from now on, as on a kernel that predates them
// (seccomp, with no_new_privs set; the filter matches numbers of the
// native ABI only). It cannot be undone: call it in a child ([InChild]).
func DenySyscalls(nrs ...uintptr) error {
	const (
		ldAbs  = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS
		jeqK   = unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K
		retK   = unix.BPF_RET | unix.BPF_K
		allow  = unix.SECCOMP_RET_ALLOW
		enosys = unix.SECCOMP_RET_ERRNO | uint32(unix.ENOSYS)
	)
	prog := []unix.SockFilter{{Code: ldAbs, K: 0}} // seccomp_data.nr
	for i, nr := range nrs {
		toDeny := uint8(len(nrs) - i) // skip the remaining checks and allow
		prog = append(prog, unix.SockFilter{Code: jeqK, Jt: toDeny, K: uint32(nr)})
	}
	prog = append(prog, unix.SockFilter{Code: retK, K: allow}, unix.SockFilter{Code: retK, K: enosys})
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return os.NewSyscallError("prctl", err)
	}
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	_, _, errno := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER,
		unix.SECCOMP_FILTER_FLAG_TSYNC, uintptr(unsafe.Pointer(&fprog)))
	if errno != 0 {
		return os.NewSyscallError("seccomp", errno)
	}
	return nil
}

// DenyNewerSyscalls is [DenySyscalls] for what a RHEL 8 kernel (4.18)
// lacks: the new mount API (5.2, mount_setattr 5.12), openat2 (5.6) and
// fchmodat2 (6.6). Call it in a child ([InChild]).
func DenyNewerSyscalls() error {
	return DenySyscalls(unix.SYS_OPEN_TREE, unix.SYS_MOVE_MOUNT, unix.SYS_FSOPEN, unix.SYS_FSCONFIG,
		unix.SYS_FSMOUNT, unix.SYS_MOUNT_SETATTR, unix.SYS_OPENAT2, unix.SYS_FCHMODAT2, unix.SYS_OPEN_TREE_ATTR)
}
