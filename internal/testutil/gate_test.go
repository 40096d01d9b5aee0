package testutil

import (
	"os"
	"os/exec"
	"testing"

	"github.com/stretchr/testify/assert"
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
		t.Run(EnvRequirePrivileged+"="+tc.require, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^TestGateChild$", "-test.v")
			cmd.Env = append(os.Environ(), "NVC_GATE_CHILD=1", EnvRequirePrivileged+"="+tc.require)
			out, err := cmd.CombinedOutput()
			if tc.wantFail {
				assert.Error(t, err, "%s=%q: want the child to fail\n%s", EnvRequirePrivileged, tc.require, out)
			} else {
				assert.NoError(t, err, "%s=%q: want the child to pass\n%s", EnvRequirePrivileged, tc.require, out)
			}
			assert.Contains(t, string(out), tc.wantOut, "%s=%q: output", EnvRequirePrivileged, tc.require)
			assert.Contains(t, string(out), "child reason 42", "%s=%q: output lacks the reason", EnvRequirePrivileged, tc.require)
			assert.NotContains(t, string(out), "unreachable", "%s=%q: test went on after the gate", EnvRequirePrivileged, tc.require)
		})
	}
}
