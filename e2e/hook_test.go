//go:build e2e

package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/opencontainers/runtime-spec/specs-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-nvc/nvc/internal/testutil"
	"github.com/go-nvc/nvc/nvcontainer"
	"github.com/go-nvc/nvc/nvcontainer/request"
)

// hookBundle writes a bundle whose process has env and returns the bundle
// dir and the OCI state a runtime would give the hook. The state's pid is
// this test process, whose root is the host's: a plan for it reads the
// rootfs through /proc/PID/root at its host path.
func hookBundle(t *testing.T, env ...string) (bundle, state string) {
	t.Helper()
	spec := specs.Spec{Version: "1.0.2", Root: &specs.Root{Path: "rootfs"},
		Process: &specs.Process{Args: []string{"sh"}, Env: append([]string{"PATH=/bin"}, env...)}}
	data, _ := json.Marshal(spec)
	bundle = testutil.Bundle(t, string(data))
	testutil.BuildTree(t, bundle, `file rootfs/etc/debian_version "12.5\n"`)
	return bundle, fmt.Sprintf(`{"ociVersion":"1.0.2","id":"c1","status":"creating","pid":%d,"bundle":%q}`, os.Getpid(), bundle)
}

// hook runs our hook with stdin and args; env is PATH only, as
// nvidia-container-runtime registers it.
func hook(t *testing.T, stdin string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	return run(t, []string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin"}, stdin, buildExample(t, "nvidia-container-runtime-hook", false), args...)
}

// TestHookDryRun prints the nvidia-container-cli command line NVIDIA's
// hook would execute (nvidia-container-cli's command line), then feeds that very
// line to our nvidia-container-cli: it parses it and plans what it asks.
func TestHookDryRun(t *testing.T) {
	fh := simHost(t, nil)
	config := hookConfig(t, fh, nil)
	bundle, state := hookBundle(t, "NVIDIA_VISIBLE_DEVICES=2,0", "NVIDIA_DRIVER_CAPABILITIES=utility,compute",
		"NVIDIA_REQUIRE_DRIVER=driver>=500")
	out, stderr, code := hook(t, state, "-config", config, "-dry-run", "prestart")
	require.Equal(t, 0, code, "exit %d\n%s", code, stderr)
	ldconfig := "@/sbin/ldconfig"
	if _, err := os.Stat("/sbin/ldconfig.real"); err == nil {
		ldconfig += ".real"
	}
	rootfs := filepath.Join(bundle, "rootfs")
	want := "nvidia-container-cli --root=" + fh.Root + " configure --cuda-compat-mode=ldconfig --ldconfig=" + ldconfig +
		" --device=2,0 --compute --utility '--require=driver>=500' --pid=" + strconv.Itoa(os.Getpid()) + " " + rootfs + "\n"
	assert.Equal(t, want, out, "-dry-run printed")

	args := splitShell(t, strings.TrimSpace(out))
	args = slices.Insert(args[1:], 1, "--proc-root="+fh.ProcRoot, "--dev-root="+fh.DevRoot)
	plan, stderr, code := cli(t, append(args, "--dry-run")...)
	require.Equal(t, 0, code, "our nvidia-container-cli on the hook's command line: exit %d\n%s", code, stderr)
	var p nvcontainer.Plan
	require.NoError(t, json.Unmarshal([]byte(plan), &p))
	if assert.Len(t, p.GPUs, 2, "plan from the hook's command line: gpus") {
		assert.Equal(t, 2, p.GPUs[0].Index, "plan from the hook's command line: gpus %+v", p.GPUs)
		assert.Equal(t, 0, p.GPUs[1].Index, "plan from the hook's command line: gpus %+v", p.GPUs)
	}
	assert.Equal(t, nvcontainer.Container{PID: os.Getpid(), Rootfs: rootfs}, p.Container, "plan from the hook's command line: container")
	assert.Equal(t, "compute,utility", p.Capabilities.String(), "plan from the hook's command line: caps")
	assert.Equal(t, request.CompatLdconfig, p.CUDACompat.Mode, "plan from the hook's command line: compat")
}

// splitShell undoes toolkit.FormatCommand's single quotes.
func splitShell(t *testing.T, line string) []string {
	t.Helper()
	var args []string
	for _, w := range strings.Fields(line) {
		if strings.HasPrefix(w, "'") {
			w = strings.Trim(w, "'")
		}
		args = append(args, w)
	}
	return args
}

// TestHookCommands checks what the hook does beside configuring: nothing
// for a container that asks for no GPU (dry run or not, even without
// root), nothing at poststart and poststop, and errors for bad input.
func TestHookCommands(t *testing.T) {
	fh := simHost(t, nil)
	config := hookConfig(t, fh, nil)
	_, plain := hookBundle(t)
	_, void := hookBundle(t, "NVIDIA_VISIBLE_DEVICES=void", "CUDA_VERSION=12.4")
	_, gpu := hookBundle(t, "NVIDIA_VISIBLE_DEVICES=all")
	_, mig := hookBundle(t, "NVIDIA_VISIBLE_DEVICES=all", "NVIDIA_MIG_CONFIG_DEVICES=all")
	tests := []struct {
		name, stdin string
		args        []string
		code        int
		stdout, err string
	}{
		{"no GPU asked", plain, []string{"-config", config, "prestart"}, 0, "", ""},
		{"no GPU asked, dry run", plain, []string{"-config", config, "-dry-run", "prestart"}, 0, "", ""},
		{"void", void, []string{"--config", config, "createRuntime"}, 0, "", ""},
		{"poststart", "", []string{"poststart"}, 0, "", ""},
		{"poststop", "not json", []string{"-config", "/nonexistent", "poststop"}, 0, "", ""},
		{"unknown command", gpu, []string{"-config", config, "start"}, 2, "", `unknown command "start"`},
		{"no command", gpu, []string{"-config", config}, 2, "", `unknown command ""`},
		{"missing config", gpu, []string{"-config", "/nonexistent/config.toml", "prestart"}, 1, "", "/nonexistent/config.toml"},
		{"bad state", "{", []string{"-config", config, "prestart"}, 1, "", "nvidia-container-runtime-hook: "},
		{"missing bundle", `{"pid":1,"bundle":"/nonexistent"}`, []string{"-config", config, "prestart"}, 1, "", "/nonexistent/config.json"},
		{"mig config unprivileged", mig, []string{"-config", config, "-dry-run", "prestart"}, 1, "", "not allowed in an unprivileged container"},
		{"all, dry run", gpu, []string{"-config", config, "-dry-run", "prestart"}, 0, "--device=all", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, stderr, code := hook(t, tc.stdin, tc.args...)
			assert.Equal(t, tc.code, code, "exit status; stdout %q, stderr %q", out, stderr)
			if tc.stdout == "" {
				assert.Empty(t, out, "stdout")
			} else {
				assert.Contains(t, out, tc.stdout, "stdout")
			}
			assert.Contains(t, stderr, tc.err, "stderr")
		})
	}
}
