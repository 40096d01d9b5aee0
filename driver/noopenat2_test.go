package driver

import (
	"errors"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/go-nvc/nvc/capabilities"
	"github.com/go-nvc/nvc/internal/fakehost"
	"github.com/go-nvc/nvc/internal/testutil"
)

const envNoOpenat2 = "NVC_DRIVER_TEST_NO_OPENAT2"

// denyOpenat2 installs a seccomp filter on every thread of the process that
// makes openat2 fail with ENOSYS, as on kernels before 5.6. Only the child
// process of TestWithoutOpenat2 calls it.
func denyOpenat2() error {
	if runtime.GOARCH != "amd64" {
		return errors.New("filter written for x86-64 only")
	}
	const (
		ld  = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS
		jeq = unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K
		ret = unix.BPF_RET | unix.BPF_K
	)
	prog := []unix.SockFilter{
		{Code: ld, K: 4}, // seccomp_data.arch
		{Code: jeq, Jt: 0, Jf: 3, K: unix.AUDIT_ARCH_X86_64},
		{Code: ld, K: 0}, // seccomp_data.nr
		{Code: jeq, Jt: 0, Jf: 1, K: unix.SYS_OPENAT2},
		{Code: ret, K: unix.SECCOMP_RET_ERRNO | uint32(unix.ENOSYS)},
		{Code: ret, K: unix.SECCOMP_RET_ALLOW},
	}
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return err
	}
	_, _, errno := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, unix.SECCOMP_FILTER_FLAG_TSYNC, uintptr(unsafe.Pointer(&fprog)))
	if errno != 0 {
		return errno
	}
	return nil
}

// TestWithoutOpenat2 runs the resolution and selection tests in a child
// process where openat2 fails with ENOSYS, so that both this package and
// filepath-securejoin fall back to their userspace resolution, as on RHEL 8's
// 4.18 kernel.
func TestWithoutOpenat2(t *testing.T) {
	if os.Getenv(envNoOpenat2) != "1" {
		cmd := exec.Command(os.Args[0], "-test.run=^(TestWithoutOpenat2|TestResolveInRoot|TestSelectionRules|TestSelectionWSL)$", "-test.v")
		cmd.Env = append(os.Environ(), envNoOpenat2+"=1")
		out, err := cmd.CombinedOutput()
		if i := strings.Index(string(out), "installing the openat2 filter: "); i >= 0 {
			testutil.RequireKernel(t, "seccomp filters", errors.New(strings.TrimSpace(string(out[i:]))))
		}
		if err != nil || !strings.Contains(string(out), "openat2 denied: ENOSYS") || strings.Contains(string(out), "--- SKIP") {
			t.Errorf("child without openat2: %v\n%s", err, out)
		}
		return
	}
	if _, err := unix.Openat2(unix.AT_FDCWD, ".", &unix.OpenHow{Flags: unix.O_PATH}); !errors.Is(err, unix.ENOSYS) {
		t.Fatalf("openat2 still works in the child: %v", err)
	}
	t.Log("openat2 denied: ENOSYS")
	h, err := fakehost.Generate(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	d, err := Open(&Options{Root: h.Root, ProcRoot: h.ProcRoot, DevRoot: h.DevRoot})
	if err != nil {
		t.Fatal(err)
	}
	fs, err := d.Files(capabilities.All)
	if err != nil {
		t.Fatal(err)
	}
	// 33 driver libraries and the two EGL platform libraries
	if len(fs.Libraries) != 35 || len(fs.Libraries32) != 22 || len(fs.Binaries) != 6 || len(fs.IPCs) != 3 || len(fs.Firmware) != 2 {
		t.Errorf("without openat2: %d libraries, %d 32-bit, %d binaries, %d IPCs, %d firmware", len(fs.Libraries), len(fs.Libraries32), len(fs.Binaries), len(fs.IPCs), len(fs.Firmware))
	}
}

// TestMain installs the filter before any test of the child runs.
func TestMain(m *testing.M) {
	if os.Getenv(envNoOpenat2) == "1" {
		if err := denyOpenat2(); err != nil {
			os.Stderr.WriteString("installing the openat2 filter: " + err.Error() + "\n")
			os.Exit(2)
		}
	}
	os.Exit(m.Run())
}
