//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/opencontainers/runtime-spec/specs-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-nvc/nvc/devices"
	"github.com/go-nvc/nvc/driver"
	"github.com/go-nvc/nvc/internal/fakehost"
	"github.com/go-nvc/nvc/internal/testutil"
	"github.com/go-nvc/nvc/internal/testutil/container"
)

// gpuEnv is what the GPU containers ask for: GPUs 0 and 2 of the eight,
// compute and utility.
var gpuEnv = []string{"NVIDIA_VISIBLE_DEVICES=0,2", "NVIDIA_DRIVER_CAPABILITIES=compute,utility"}

// runtimeCase is one container run: a runtime and how our hook gets in.
type runtimeCase struct {
	t       *testing.T
	rt      *ociRuntime
	host    *fakehost.Host
	hook    string // the hook binary
	wrapper string // the runtime wrapper binary
}

// TestRuntimes runs busybox containers on a simulated DGX A100 under runc
// and crun: with our hook as prestart (and createRuntime) hook, through
// nvidia-container-runtime, with the hook's cgroup rules off, and without
// the hook, and with graphics (the GPUs' /dev/dri nodes and by-path
// links). What the container sees is checked from inside: the device
// nodes, the masked /proc/driver/nvidia, the driver files, the program
// that needs libcuda.so.1, and the device cgroup (ENXIO with our rule,
// EPERM without it).
func TestRuntimes(t *testing.T) {
	for _, name := range []string{"runc", "crun"} {
		t.Run(name, func(t *testing.T) {
			c := &runtimeCase{t: t, rt: requireRuntime(t, name), host: simHost(t, nil),
				hook: buildExample(t, "nvidia-container-runtime-hook", false)}
			c.wrapper = buildExample(t, "nvidia-container-runtime", false)
			config := hookConfig(t, c.host, nil, "[nvidia-container-runtime]", "runtimes = ["+quote(name)+"]",
				"[nvidia-container-runtime-hook]", "path = "+quote(c.hook))
			t.Run("prestart", func(t *testing.T) { c.runHooked(t, "prestart", config) })
			t.Run("createRuntime", func(t *testing.T) { c.runHooked(t, "createRuntime", config) })
			t.Run("graphics", func(t *testing.T) { c.runGraphics(t, config) })
			t.Run("cli", func(t *testing.T) { c.runCLIHook(t) })
			t.Run("wrapper", func(t *testing.T) { c.runWrapped(t, config) })
			t.Run("wrapper-non-gpu", func(t *testing.T) { c.runWrappedNonGPU(t, config) })
			t.Run("unmet-requirement", func(t *testing.T) { c.runUnmet(t) })
			t.Run("no-cgroups", func(t *testing.T) { c.runNoCgroups(t) })
			t.Run("no-hook", func(t *testing.T) { c.runWithoutHook(t) })
		})
	}
}

func quote(s string) string { b, _ := json.Marshal(s); return string(b) }

// start runs a probe container on a fresh rootfs with the kernel-procfs
// fixture hook first, then extra prestart or createRuntime hooks.
func (c *runtimeCase) start(t *testing.T, env []string, stage string, extra ...specs.Hook) (rootfs, bundle string) {
	rootfs = busyboxRootfs(t)
	hooks := &specs.Hooks{Prestart: []specs.Hook{kernelProcHook(t, c.host, rootfs)}}
	if stage == "createRuntime" {
		hooks.CreateRuntime = extra
	} else {
		hooks.Prestart = append(hooks.Prestart, extra...)
	}
	return rootfs, newBundle(t, rootfs, probeScript, env, hooks)
}

func (c *runtimeCase) probe(t *testing.T, bundle, wrapper, config string) map[string]string {
	t.Helper()
	out, stderr, code := c.rt.run(t, bundle, strings.ToLower(testName(t)), wrapper, config)
	require.Equal(t, 0, code, "%s run: exit %d\nstdout:\n%s\nstderr:\n%s", c.rt.name, code, out, stderr)
	t.Logf("container output:\n%s", out)
	return parseProbe(out)
}

func (c *runtimeCase) runHooked(t *testing.T, stage, config string) {
	rootfs, bundle := c.start(t, gpuEnv, stage, ourHook(c.hook, config, stage))
	c.checkConfigured(t, c.probe(t, bundle, "", ""), rootfs)
}

// runCLIHook configures the container the way NVIDIA's hook does, by
// executing nvidia-container-cli configure --pid=PID ROOTFS — ours.
func (c *runtimeCase) runCLIHook(t *testing.T) {
	cli := buildExample(t, "nvidia-container-cli", false)
	rootfs := busyboxRootfs(t)
	const script = `pid=$(busybox sed -n 's/.*"pid": *\([0-9]*\).*/\1/p')
exec "$@" configure --pid="$pid" --device=0,2 --compute --utility "$ROOTFS"`
	h := specs.Hook{Path: testutil.RequireCommand(t, "busybox"), Args: append([]string{"busybox", "sh", "-c", script, "cli-hook", cli}, hostFlags(c.host)...),
		Env: []string{"PATH=/usr/bin:/bin", "ROOTFS=" + rootfs}}
	hooks := &specs.Hooks{Prestart: []specs.Hook{kernelProcHook(t, c.host, rootfs), h}}
	bundle := newBundle(t, rootfs, probeScript, nil, hooks)
	c.checkConfigured(t, c.probe(t, bundle, "", ""), rootfs)
}

func (c *runtimeCase) runWrapped(t *testing.T, config string) {
	rootfs, bundle := c.start(t, gpuEnv, "prestart")
	c.checkConfigured(t, c.probe(t, bundle, c.wrapper, config), rootfs)
	spec := readSpec(t, bundle)
	pre := spec.Hooks.Prestart
	want := ourHook(c.hook, config, "prestart")
	const msg = "prestart hooks after the wrapper = %+v\nwant the fixture hook, then %+v with an explicit env"
	if assert.Len(t, pre, 2, msg, pre, want) {
		assert.Equal(t, want.Path, pre[1].Path, msg, pre, want)
		assert.True(t, slices.Equal(pre[1].Args, want.Args), msg, pre, want)
		assert.NotEmpty(t, pre[1].Env, msg, pre, want)
	}
}

// driScript lists what a graphics container sees of /dev/dri.
const driScript = "cd /\n" + probeFunc + `
p dri 'busybox ls /dev/dri'
p card1 'busybox ls -l /dev/dri/card1'
p render130 'busybox ls -l /dev/dri/renderD130'
p bypath 'busybox ls /dev/dri/by-path'
p link0 'busybox readlink /dev/dri/by-path/pci-0000:07:00.0-card'
p linked 'busybox ls -lL /dev/dri/by-path/pci-0000:47:00.0-render'
`

// runGraphics asks for GPUs 0 and 2 with graphics: the container gets
// their DRM card and render nodes (card1, renderD128, card3, renderD130,
// as the simulated sysfs lists them under each GPU's PCI device), not the
// decoy VGA's card0 nor GPU 1's, and the by-path links to them.
func (c *runtimeCase) runGraphics(t *testing.T, config string) {
	rootfs := busyboxRootfs(t)
	env := []string{"NVIDIA_VISIBLE_DEVICES=0,2", "NVIDIA_DRIVER_CAPABILITIES=graphics,utility"}
	hooks := &specs.Hooks{Prestart: []specs.Hook{kernelProcHook(t, c.host, rootfs), ourHook(c.hook, config, "prestart")}}
	got := c.probe(t, newBundle(t, rootfs, driScript, env, hooks), "", "")
	assert.Equal(t, "by-path|card1|card3|renderD128|renderD130", got["dri"], "/dev/dri")
	assert.Regexp(t, `^c.* 226, +1 `, got["card1"], "/dev/dri/card1, want the bound node 226:1")
	assert.Regexp(t, `^c.* 226, +130 `, got["render130"], "/dev/dri/renderD130, want the bound node 226:130")
	assert.Equal(t, "pci-0000:07:00.0-card|pci-0000:07:00.0-render|pci-0000:47:00.0-card|pci-0000:47:00.0-render", got["bypath"], "/dev/dri/by-path")
	assert.Equal(t, "../card1", got["link0"], "by-path link of GPU 0's card")
	assert.Regexp(t, `^c.* 226, +130 `, got["linked"], "GPU 2's render link, want it to lead to 226:130")
}

func (c *runtimeCase) runWrappedNonGPU(t *testing.T, config string) {
	_, bundle := c.start(t, []string{"NVIDIA_VISIBLE_DEVICES=void"}, "prestart")
	before, _ := os.ReadFile(filepath.Join(bundle, "config.json"))
	got := c.probe(t, bundle, c.wrapper, config)
	after, _ := os.ReadFile(filepath.Join(bundle, "config.json"))
	assert.Equal(t, string(before), string(after), "the wrapper changed the config.json of a container that asks for no GPU")
	assert.Contains(t, got["dev0"], "No such file", "non-GPU container got a GPU: %v", got)
	assert.True(t, strings.HasSuffix(got["cudaprog"], "exit 127"), "non-GPU container got a GPU: %v", got)
}

// runUnmet runs a CUDA image's environment whose NVIDIA_REQUIRE_CUDA the
// host does not meet: the hook fails with the requirement error, the
// runtime does not start the container, and the rootfs is as it was.
// (crun does not pass the hook's stderr on, so the hook's log file is read.)
func (c *runtimeCase) runUnmet(t *testing.T) {
	logFile := filepath.Join(t.TempDir(), "hook.log")
	config := hookConfig(t, c.host, []string{"debug = " + quote(logFile)})
	env := append(slices.Clone(gpuEnv), "NVIDIA_REQUIRE_CUDA=cuda>=99.0")
	rootfs, bundle := c.start(t, env, "prestart", ourHook(c.hook, config, "prestart"))
	before := container.SnapshotTree(t, rootfs)
	out, stderr, code := c.rt.run(t, bundle, strings.ToLower(testName(t)), "", "")
	log, _ := os.ReadFile(logFile)
	const msg = "requirement error: unsatisfied condition: cuda>=99.0"
	const why = "%s run with an unmet requirement: exit %d, stdout %q, stderr %q, hook log %q; want a failed hook and no container"
	assert.NotEqual(t, 0, code, why, c.rt.name, code, out, stderr, log)
	assert.Empty(t, out, why, c.rt.name, code, out, stderr, log)
	assert.Contains(t, string(log), msg, why, c.rt.name, code, out, stderr, log)
	if c.rt.name == "runc" {
		assert.Contains(t, stderr, msg, why, c.rt.name, code, out, stderr, log)
	}
	diff := container.DiffSnapshots(before, container.SnapshotTree(t, rootfs))
	assert.Empty(t, diff, "the failed hook left changes in the rootfs:\n%s", strings.Join(diff, "\n"))
}

func (c *runtimeCase) runNoCgroups(t *testing.T) {
	config := hookConfig(t, c.host, []string{"no-cgroups = true"})
	_, bundle := c.start(t, gpuEnv, "prestart", ourHook(c.hook, config, "prestart"))
	got := c.probe(t, bundle, "", "")
	assert.Regexp(t, `^c.* 195, +0 `, got["dev0"], "/dev/nvidia0, want the bound node 195:0")
	assert.Contains(t, got["open0"], "Operation not permitted", "opening /dev/nvidia0 without our cgroup rule: want EPERM (the runtime's device cgroup denies 195:0)")
}

func (c *runtimeCase) runWithoutHook(t *testing.T) {
	_, bundle := c.start(t, gpuEnv, "prestart")
	got := c.probe(t, bundle, "", "")
	assert.True(t, strings.HasSuffix(got["cudaprog"], "exit 127"), "without the hook: cudaprog %q, /dev/nvidia0 %q; want exit 127 and no node", got["cudaprog"], got["dev0"])
	assert.Contains(t, got["dev0"], "No such file", "without the hook: cudaprog %q; want exit 127 and no node", got["cudaprog"])
	// The fixture alone shows the simulated kernel's whole procfs.
	assert.Len(t, strings.Split(got["gpus"], "|"), 8, "without the hook: GPUs in /proc/driver/nvidia/gpus, want 8")
	assert.Contains(t, got["params"], "ModifyDeviceFiles: 1", "without the hook: params, want the host's ModifyDeviceFiles: 1")
}

// checkConfigured checks a GPU container's view and its loader cache.
func (c *runtimeCase) checkConfigured(t *testing.T, got map[string]string, rootfs string) {
	t.Helper()
	host, err := devices.Discover(context.Background(), &devices.Options{Backend: devices.Procfs, Roots: driver.Roots{Driver: c.host.Root, Proc: c.host.ProcRoot, Dev: c.host.DevRoot}})
	require.NoError(t, err)
	wantGPUs := path.Base(host.GPUs[0].ProcDir) + "|" + path.Base(host.GPUs[2].ProcDir)
	checks := []struct {
		key  string
		ok   bool
		want string
	}{
		{"dev0", regexp.MustCompile(`^c.* 195, +0 `).MatchString(got["dev0"]), "character device 195:0"},
		{"dev2", regexp.MustCompile(`^c.* 195, +2 `).MatchString(got["dev2"]), "character device 195:2"},
		{"ctl", regexp.MustCompile(`^c.* 195, +255 `).MatchString(got["ctl"]), "character device 195:255"},
		{"dev1", strings.Contains(got["dev1"], "No such file"), "absent (GPU 1 not selected)"},
		{"gpus", got["gpus"] == wantGPUs, wantGPUs + " only"},
		{"params", got["params"] == "ModifyDeviceFiles: 0", "ModifyDeviceFiles: 0"},
		{"smi", got["smi"] == "/usr/bin/nvidia-smi", "present (utility)"},
		{"libcuda", got["libcuda"] == "libcuda.so."+c.host.DriverVersion, "a link to libcuda.so." + c.host.DriverVersion},
		{"cudaprog", got["cudaprog"] == "exit 0", "exit 0 (the loader found libcuda.so.1)"},
		{"open0", strings.Contains(got["open0"], "No such device or address"), "ENXIO: allowed by our cgroup rule, no driver behind it"},
	}
	for _, ck := range checks {
		assert.True(t, ck.ok, "in the container, %s = %q; want %s", ck.key, got[ck.key], ck.want)
	}
	checkCacheListsLibcuda(t, rootfs, "/usr/lib/x86_64-linux-gnu")
}

func readSpec(t testing.TB, bundle string) *specs.Spec {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(bundle, "config.json"))
	require.NoError(t, err)
	var spec specs.Spec
	require.NoError(t, json.Unmarshal(data, &spec))
	if spec.Hooks == nil {
		spec.Hooks = &specs.Hooks{}
	}
	return &spec
}
