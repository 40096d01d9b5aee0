package testutil

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestGateChild is run by TestUnavailable in a child process; it does nothing
// on its own.
func TestGateChild(t *testing.T) {
	if os.Getenv("NVC_GATE_CHILD") != "1" {
		return
	}
	Unavailable(t, "child reason %d", 42)
	t.Log("unreachable")
}

func TestUnavailable(t *testing.T) {
	for _, tc := range []struct {
		require  string
		wantOut  string
		wantFail bool
	}{
		{"", "--- SKIP: TestGateChild", false},
		{"0", "--- SKIP: TestGateChild", false},
		{"1", "--- FAIL: TestGateChild", true},
	} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestGateChild$", "-test.v")
		cmd.Env = append(os.Environ(), "NVC_GATE_CHILD=1", EnvRequirePrivileged+"="+tc.require)
		out, err := cmd.CombinedOutput()
		if (err != nil) != tc.wantFail {
			t.Errorf("%s=%q: exit error %v, want failure %v\n%s", EnvRequirePrivileged, tc.require, err, tc.wantFail, out)
		}
		if !strings.Contains(string(out), tc.wantOut) || !strings.Contains(string(out), "child reason 42") {
			t.Errorf("%s=%q: output lacks %q and the reason:\n%s", EnvRequirePrivileged, tc.require, tc.wantOut, out)
		}
		if strings.Contains(string(out), "unreachable") {
			t.Errorf("%s=%q: test went on after the gate:\n%s", EnvRequirePrivileged, tc.require, out)
		}
	}
}
