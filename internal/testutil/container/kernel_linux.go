package container

import (
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// envChild names the test a re-exec'd child runs as itself.
const envChild = "NVC_TESTUTIL_CHILD"

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
	cmd := exec.Command(os.Args[0], "-test.run=^"+regexp.QuoteMeta(t.Name())+"$", "-test.v")
	cmd.Env = append(os.Environ(), envChild+"="+t.Name())
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: "+t.Name()) {
		t.Errorf("child %s did not pass: %v\n%s", t.Name(), err, out)
	}
	return false
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
