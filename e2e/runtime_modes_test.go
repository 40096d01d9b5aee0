//go:build e2e

package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/opencontainers/runtime-spec/specs-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-nvc/nvc/internal/fakehost"
	"github.com/go-nvc/nvc/internal/testutil"
	"github.com/go-nvc/nvc/internal/testutil/container"
)

// modesCase is runc through our nvidia-container-runtime in a CDI mode on
// a simulated host in the Fedora layout (libraries in /usr/lib64, found
// in the container only through the loader cache the CDI hook writes).
type modesCase struct {
	rt      *ociRuntime
	host    *fakehost.Host
	wrapper string
	bin     string   // PATH dir with nvidia-cdi-hook (static)
	specDir string   // the cdi mode's spec dir, with our generated spec
	tmp     string   // the wrapper's TMPDIR
	env     []string // more of the wrapper's environment
}

// modesProbe is probeScript for CDI modes: the request left in the
// environment and libcuda in /usr/lib64.
const modesProbe = "cd /\n" + probeFunc + `
p dev0 'busybox ls -l /dev/nvidia0'
p dev1 'busybox ls /dev/nvidia1'
p dev2 'busybox ls -l /dev/nvidia2'
p ctl 'busybox ls -l /dev/nvidiactl'
p smi 'busybox ls /usr/bin/nvidia-smi'
p libcuda 'busybox readlink /usr/lib64/libcuda.so.1'
p cudaprog '/cudaprog; echo "exit $?"'
p open0 'busybox cat /dev/nvidia0'
p nvd 'echo "$NVIDIA_VISIBLE_DEVICES"'
`

// TestRuntimeModes runs busybox under runc and crun through nvidia-container-runtime
// in cdi mode (IDs with the default kind, and CDI names in auto mode, from
// a spec dir holding the spec nvidia-ctk cdi generate wrote) and in
// jit-cdi mode (the spec made in process), checking from inside that GPUs
// 0 and 2 and the driver are there and the request is gone from the
// environment, and that the host tree, its mounts and the wrapper's
// TMPDIR are as before.
func TestRuntimeModes(t *testing.T) {
	for _, name := range []string{"runc", "crun"} {
		t.Run(name, func(t *testing.T) { testRuntimeModes(t, name) })
	}
}

func testRuntimeModes(t *testing.T, runtime string) {
	c := &modesCase{rt: requireRuntime(t, runtime), host: cdiHost(t), wrapper: buildExample(t, "nvidia-container-runtime", false),
		bin: t.TempDir(), specDir: t.TempDir(), tmp: t.TempDir()}
	hook := staticExample(t, "nvidia-cdi-hook")
	require.NoError(t, os.Symlink(hook, filepath.Join(c.bin, "nvidia-cdi-hook")))
	ctk := buildExample(t, "nvidia-ctk", false)
	args := []string{"cdi", "generate", "--driver-root", c.host.Root, "--proc-root", c.host.ProcRoot,
		"--hook-path", hook, "--output", filepath.Join(c.specDir, "nvidia.json")}
	_, stderr, code := run(t, os.Environ(), "", ctk, args...)
	require.Equal(t, 0, code, "nvidia-ctk %s: exit %d\n%s", strings.Join(args, " "), code, stderr)

	tests := []struct {
		name, mode, devices string
		annotations         map[string]string
	}{
		{"cdi", "cdi", "0,2", nil},
		{"auto-cdi-names", "auto", "nvidia.com/gpu=0,nvidia.com/gpu=2", nil},
		{"auto-annotations", "auto", "", map[string]string{"cdi.k8s.io/gpus": "nvidia.com/gpu=0,nvidia.com/gpu=2"}},
		{"jit-cdi", "jit-cdi", "0,2", nil},
		{"jit-cdi-names", "jit-cdi", "runtime.nvidia.com/gpu=0,runtime.nvidia.com/gpu=2", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			config := hookConfig(t, c.host, nil, "[nvidia-container-runtime]", "mode = "+quote(tt.mode), "runtimes = ["+quote(runtime)+"]",
				"[nvidia-container-runtime.modes.cdi]", "spec-dirs = ["+quote(c.specDir)+"]")
			c.runMode(t, config, tt.devices, tt.annotations)
		})
	}
}

func (c *modesCase) runMode(t *testing.T, config, devices string, annotations map[string]string) {
	// No kernelProcHook: the disable-device-node-modification hook reads
	// the real host's procfs (cdi_hooks_test.go covers it with --proc-root).
	rootfs := busyboxRootfs(t)
	env := []string{"NVIDIA_DRIVER_CAPABILITIES=compute,utility"}
	if devices != "" {
		env = append(env, "NVIDIA_VISIBLE_DEVICES="+devices)
	}
	bundle := newBundle(t, rootfs, modesProbe, env, &specs.Hooks{})
	editBundle(t, bundle, func(s *specs.Spec) { s.Annotations = annotations })
	hostBefore := container.SnapshotTree(t, c.host.Root)
	out, stderr, code := c.run(t, bundle, strings.ToLower(testName(t)), config)
	require.Equal(t, 0, code, "%s through the wrapper: exit %d\nstdout:\n%s\nstderr:\n%s", c.rt.name, code, out, stderr)
	t.Logf("container output:\n%s", out)
	got := parseProbe(out)
	assertProbe(t, got, append(gpus02Checks(got, c.host.DriverVersion),
		probeCheck{"nvd", got["nvd"] == "void", "void (the runtime removed the request)"}))
	checkCacheListsLibcuda(t, rootfs, "/usr/lib64")
	spec := readSpec(t, bundle)
	assert.Empty(t, spec.Hooks.Prestart, "the wrapper added a prestart hook in a CDI mode")
	assert.NotEmpty(t, spec.Hooks.CreateContainer, "no CDI createContainer hook in config.json")
	assert.Empty(t, container.DiffSnapshots(hostBefore, container.SnapshotTree(t, c.host.Root)), "the simulated host changed")
	assert.Empty(t, testutil.MountsBelow(t, c.host.Root), "mounts left on the host under the simulated host")
	assert.Empty(t, testutil.MountsBelow(t, rootfs), "mounts left on the host under the rootfs")
	left, err := os.ReadDir(c.tmp)
	require.NoError(t, err)
	assert.Empty(t, left, "the wrapper left files in its TMPDIR")
}

// run runs the container through the wrapper with config, nvidia-cdi-hook
// first in PATH and TMPDIR the case's.
func (c *modesCase) run(t *testing.T, bundle, id, config string) (stdout, stderr string, code int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, c.wrapper, c.rt.runArgs(bundle, id)...)
	cmd.Env = append([]string{"PATH=" + c.bin + ":" + os.Getenv("PATH"), "NVIDIA_CTK_CONFIG_FILE_PATH=" + config, "TMPDIR=" + c.tmp}, c.env...)
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	exec.Command(c.rt.path, "--root", c.rt.state, "delete", "--force", id).Run()
	require.False(t, ctx.Err() != nil || (err != nil && cmd.ProcessState == nil), "wrapper run %s: %v\n%s", id, err, errb.String())
	return out.String(), errb.String(), cmd.ProcessState.ExitCode()
}

// In legacy mode our hook configures NVIDIA's CDI names as the IDs they
// name (NVIDIA's hook refuses them in auto mode; before, ours failed with
// "unknown device: nvidia.com/gpu=0").
func TestHookCDINames(t *testing.T) {
	c := &runtimeCase{t: t, rt: requireRuntime(t, "runc"), host: simHost(t, nil),
		hook: buildExample(t, "nvidia-container-runtime-hook", false), wrapper: buildExample(t, "nvidia-container-runtime", false)}
	config := hookConfig(t, c.host, nil, "[nvidia-container-runtime]", `mode = "legacy"`, `runtimes = ["runc"]`,
		"[nvidia-container-runtime-hook]", "path = "+quote(c.hook))
	env := []string{"NVIDIA_VISIBLE_DEVICES=nvidia.com/gpu=0,runtime.nvidia.com/gpu=2", "NVIDIA_DRIVER_CAPABILITIES=compute,utility"}
	rootfs, bundle := c.start(t, env, "prestart")
	c.checkConfigured(t, c.probe(t, bundle, c.wrapper, config), rootfs)
}

// In cdi mode our hook, registered directly (as docker --gpus does),
// leaves the container alone: the runtime would have applied CDI.
// NVIDIA's hook refuses there; before, ours configured the container.
func TestHookSkipsCDIMode(t *testing.T) {
	c := &runtimeCase{t: t, rt: requireRuntime(t, "runc"), host: simHost(t, nil),
		hook: buildExample(t, "nvidia-container-runtime-hook", false)}
	config := hookConfig(t, c.host, nil, "[nvidia-container-runtime]", `mode = "cdi"`)
	_, bundle := c.start(t, gpuEnv, "prestart", ourHook(c.hook, config, "prestart"))
	got := c.probe(t, bundle, "", "")
	assert.Contains(t, got["dev0"], "No such file", "cdi mode: the hook gave the container a GPU: %v", got)
	assert.True(t, strings.HasSuffix(got["cudaprog"], "exit 127"), "cdi mode: the hook gave the container the driver: %v", got)
}

// gpus02Checks are the checks of a container given GPUs 0 and 2 (gpuEnv)
// by CDI edits: their nodes and nvidiactl, not GPU 1's, nvidia-smi, and
// libcuda.so.1 found through the container's ld.so.cache.
func gpus02Checks(got map[string]string, driverVersion string) []probeCheck {
	return []probeCheck{
		{"dev0", regexp.MustCompile(`^c.* 195, +0 `).MatchString(got["dev0"]), "character device 195:0"},
		{"dev2", regexp.MustCompile(`^c.* 195, +2 `).MatchString(got["dev2"]), "character device 195:2"},
		{"ctl", regexp.MustCompile(`^c.* 195, +255 `).MatchString(got["ctl"]), "character device 195:255"},
		{"dev1", strings.Contains(got["dev1"], "No such file"), "absent (GPU 1 not requested)"},
		{"smi", got["smi"] == "/usr/bin/nvidia-smi", "present"},
		{"libcuda", got["libcuda"] == "libcuda.so."+driverVersion, "a link to libcuda.so." + driverVersion},
		{"cudaprog", got["cudaprog"] == "exit 0", "exit 0 (the loader found libcuda.so.1 through the ld.so.cache)"},
		{"open0", strings.Contains(got["open0"], "No such device or address"), "ENXIO: allowed by the device cgroup, no driver behind it"},
	}
}

// probeCheck is one fact a probe printed from inside a container.
type probeCheck struct {
	key  string
	ok   bool
	want string
}

// assertProbe asserts every check, naming what the container printed.
func assertProbe(t *testing.T, got map[string]string, checks []probeCheck) {
	t.Helper()
	for _, ck := range checks {
		assert.True(t, ck.ok, "in the container, %s = %q; want %s", ck.key, got[ck.key], ck.want)
	}
}
