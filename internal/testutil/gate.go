package testutil

import (
	"os"
	"os/exec"
	"testing"
)

// EnvRequirePrivileged names the variable that turns gate skips into failures.
const EnvRequirePrivileged = "NVC_REQUIRE_PRIVILEGED"

// PrivilegedRequired reports whether gate conditions must hold (CI).
func PrivilegedRequired() bool {
	return os.Getenv(EnvRequirePrivileged) == "1"
}

// Unavailable stops tb because something it needs is missing: a skip with the
// reason, or a failure when [PrivilegedRequired].
func Unavailable(tb testing.TB, format string, args ...any) {
	tb.Helper()
	if PrivilegedRequired() {
		tb.Fatalf("unavailable but required by "+EnvRequirePrivileged+"=1: "+format, args...)
	}
	tb.Skipf("unavailable: "+format, args...)
}

// RequireRoot gates tb on running as root.
func RequireRoot(tb testing.TB) {
	tb.Helper()
	if euid := os.Geteuid(); euid != 0 {
		Unavailable(tb, "needs root (euid %d)", euid)
	}
}

// RequireCommand gates tb on a program being in PATH and returns its path.
func RequireCommand(tb testing.TB, name string) string {
	tb.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		Unavailable(tb, "needs %s: %v", name, err)
	}
	return p
}

// RequireKernel gates tb on a kernel feature; probeErr is the result of
// trying it (nil: present).
func RequireKernel(tb testing.TB, feature string, probeErr error) {
	tb.Helper()
	if probeErr != nil {
		Unavailable(tb, "kernel lacks %s: %v", feature, probeErr)
	}
}
