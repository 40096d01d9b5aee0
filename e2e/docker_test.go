//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-nvc/nvc/devices"
	"github.com/go-nvc/nvc/driver"
	"github.com/go-nvc/nvc/internal/fakehost"
	"github.com/go-nvc/nvc/internal/testutil"
)

// dockerCgroupParent is the cgroup the test's containers live under
// (removed afterwards).
const dockerCgroupParent = "nvc-e2e-docker"

// userDaemonJSON is the daemon.json the operator had before running
// `nvidia-ctk runtime configure`: kernel-runc as the default runtime, a
// cgroup parent, a log option; all of it must survive.
func userDaemonJSON(kernelRunc string) string {
	return `{
  "default-runtime": "kernel-runc",
  "runtimes": {"kernel-runc": {"path": "` + kernelRunc + `"}},
  "cgroup-parent": "` + dockerCgroupParent + `",
  "log-opts": {"max-size": "1m"}
}
`
}

// TestDocker runs busybox containers under a dockerd the test starts on a
// simulated DGX A100, through each of Docker's front doors to the GPU:
// `docker run --gpus` (dockerd execs nvidia-container-runtime-hook from
// its PATH: ours), `docker run --runtime=nvidia` with the daemon.json our
// `nvidia-ctk runtime configure` wrote (dockerd starts with it), and our
// nvidia-docker with NV_GPU, and after `runtime configure --set-as-default`
// and a restart, a plain `docker run` with NVIDIA_VISIBLE_DEVICES; an
// unmet NVIDIA_REQUIRE_CUDA fails with the requirement error under --gpus,
// --runtime=nvidia and nvidia-docker. Each container is checked from inside (device
// nodes, the masked /proc/driver/nvidia, nvidia-smi, the program that
// needs libcuda.so.1) and its loader cache from outside (docker cp, read
// with glibc's ldconfig); the host's mount table and Docker's dirs are
// compared before and after.
func TestDocker(t *testing.T) {
	testutil.RequireRoot(t)
	start := time.Now()
	before := hostState(t)
	h := simHost(t, nil)
	hook := buildExample(t, "nvidia-container-runtime-hook", false)
	runtime := buildExample(t, "nvidia-container-runtime", false)
	ctk := buildExample(t, "nvidia-ctk", false)
	nvidiaDocker := buildExample(t, "nvidia-docker", false)

	d := newDockerDaemon(t)
	kernelRunc := d.installBins(t, h, hook, runtime)
	daemonJSON := filepath.Join(d.dir, "daemon.json")
	require.NoError(t, os.WriteFile(daemonJSON, []byte(userDaemonJSON(kernelRunc)), 0o644))
	out, err := exec.Command(ctk, "runtime", "configure", "--runtime=docker", "--config", daemonJSON).CombinedOutput()
	require.NoError(t, err, "nvidia-ctk runtime configure: %s", out)
	checkDaemonJSON(t, daemonJSON, kernelRunc, "kernel-runc")
	config := hookConfig(t, h, nil, "[nvidia-container-runtime]", "runtimes = ["+quote(kernelRunc)+"]",
		"[nvidia-container-runtime-hook]", "path = "+quote(hook))

	t.Logf("examples built, daemon.json configured: %v", time.Since(start).Round(time.Millisecond))
	d.start(t, daemonJSON, config)
	t.Logf("dockerd ready: %v", time.Since(start).Round(time.Millisecond))
	t.Cleanup(func() { removeCgroupParent(t) })
	runtimes, _, code := d.run(t, "", nil, "info", "--format", "{{json .Runtimes}}")
	require.Equal(t, 0, code)
	assert.Contains(t, runtimes, `"nvidia":{"path":"nvidia-container-runtime"`, "dockerd's runtimes, read from the configured daemon.json")
	d.importImage(t, busyboxRootfs(t))
	t.Logf("image imported: %v", time.Since(start).Round(time.Millisecond))

	cases := []struct {
		name string
		prog string // "" for docker
		env  []string
		args []string
		gpus []int
	}{
		{"gpus-all", "", nil, []string{"run", "--gpus", "all"}, []int{0, 1, 2, 3, 4, 5, 6, 7}},
		{"gpus-device0", "", nil, []string{"run", "--gpus", `"device=0"`}, []int{0}},
		{"runtime-nvidia", "", nil, []string{"run", "--runtime=nvidia", "-e", gpuEnv[0], "-e", gpuEnv[1]}, []int{0, 2}},
		{"nvidia-docker", nvidiaDocker, []string{"NV_GPU=0"}, []string{"run"}, []int{0}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { runDockerProbe(t, d, h, c.name, c.prog, c.env, c.args, c.gpus) })
	}
	doors := []struct {
		name, prog string
		env, args  []string
	}{
		{"gpus", "", nil, []string{"--gpus", "all"}},
		{"runtime-nvidia", "", nil, []string{"--runtime=nvidia", "-e", "NVIDIA_VISIBLE_DEVICES=all"}},
		{"nvidia-docker", nvidiaDocker, []string{"NV_GPU=0"}, nil},
	}
	for _, door := range doors {
		t.Run("unmet-requirement-"+door.name, func(t *testing.T) { runDockerUnmet(t, d, door.prog, door.env, door.args) })
	}

	// --set-as-default: dockerd restarted on the same data root runs a
	// plain `docker run` with NVIDIA_VISIBLE_DEVICES through our runtime.
	d.stop(t)
	out, err = exec.Command(ctk, "runtime", "configure", "--runtime=docker", "--config", daemonJSON, "--set-as-default").CombinedOutput()
	require.NoError(t, err, "nvidia-ctk runtime configure --set-as-default: %s", out)
	checkDaemonJSON(t, daemonJSON, kernelRunc, "nvidia")
	d.start(t, daemonJSON, config)
	def, _, _ := d.run(t, "", nil, "info", "--format", "{{.DefaultRuntime}}")
	assert.Equal(t, "nvidia", strings.TrimSpace(def), "dockerd's default runtime after --set-as-default")
	t.Run("set-as-default", func(t *testing.T) {
		runDockerProbe(t, d, h, "set-as-default", "", nil, []string{"run", "-e", "NVIDIA_VISIBLE_DEVICES=1"}, []int{1})
	})
	d.stop(t)
	checkHostUnchanged(t, before)
}

// runDockerProbe runs the probe script in a container named nvc-NAME
// (docker, or prog, with args, then the image and the script), checks what
// it saw against the GPUs gpus and its loader cache, and removes it.
func runDockerProbe(t *testing.T, d *dockerDaemon, h *fakehost.Host, name, prog string, env, args []string, gpus []int) {
	t.Helper()
	name = "nvc-" + name
	args = append(append([]string{}, args...), "--name", name, "--network", "none", dockerImage, "/bin/sh", "-c", probeScript)
	stdout, stderr, code := d.run(t, prog, env, args...)
	defer d.run(t, "", nil, "rm", "-f", name)
	require.Equal(t, 0, code, "%q: exit %d\nstdout:\n%s\nstderr:\n%s\ndockerd log:\n%s", args, code, stdout, stderr, d.log())
	t.Logf("container output:\n%s", stdout)
	checkDockerGPUs(t, h, parseProbe(stdout), gpus)
	cache := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(cache, "etc"), 0o755))
	_, stderr, code = d.run(t, "", nil, "cp", name+":/etc/ld.so.cache", filepath.Join(cache, "etc/ld.so.cache"))
	require.Equal(t, 0, code, "docker cp of the loader cache: %s", stderr)
	checkCacheListsLibcuda(t, cache, "/usr/lib/x86_64-linux-gnu")
}

// runDockerUnmet runs a CUDA image's environment (NVIDIA_REQUIRE_CUDA
// above the driver's CUDA) through a front door (docker, or prog, with
// env and the door's run options): the hook refuses, Docker reports the
// requirement error and the container's command never runs.
func runDockerUnmet(t *testing.T, d *dockerDaemon, prog string, env, door []string) {
	args := append(append([]string{"run", "--rm", "--network", "none"}, door...),
		"-e", "NVIDIA_REQUIRE_CUDA=cuda>=99.0", dockerImage, "/bin/sh", "-c", "echo ran")
	stdout, stderr, code := d.run(t, prog, env, args...)
	const msg = "requirement error: unsatisfied condition: cuda>=99.0"
	why := fmt.Sprintf("docker %q: exit %d, stdout %q, stderr %q; want a failed hook and no container", args, code, stdout, stderr)
	assert.NotEqual(t, 0, code, why)
	assert.NotContains(t, stdout, "ran", why)
	assert.Contains(t, stderr, msg, why)
}

// checkDaemonJSON checks what runtime configure wrote: the nvidia runtime,
// the default runtime def and every other key the user had.
func checkDaemonJSON(t *testing.T, file, kernelRunc, def string) {
	t.Helper()
	data, err := os.ReadFile(file)
	require.NoError(t, err)
	var got map[string]any
	require.NoError(t, json.Unmarshal(data, &got), "%s", data)
	var user map[string]any
	require.NoError(t, json.Unmarshal([]byte(userDaemonJSON(kernelRunc)), &user))
	user["runtimes"].(map[string]any)["nvidia"] = map[string]any{"path": "nvidia-container-runtime", "args": []any{}}
	user["default-runtime"] = def
	assert.Equal(t, user, got, "daemon.json after nvidia-ctk runtime configure:\n%s", data)
}

// checkDockerGPUs checks a container's view: the selected GPUs' nodes
// only (of GPUs 0 to 2), /proc/driver/nvidia masked down to them, nvidia-smi, libcuda.so.1
// through the loader, and our device cgroup rule (ENXIO, not EPERM).
func checkDockerGPUs(t *testing.T, h *fakehost.Host, got map[string]string, gpus []int) {
	t.Helper()
	host, err := devices.Discover(context.Background(), &devices.Options{Backend: devices.Procfs, Roots: driver.Roots{Driver: h.Root, Proc: h.ProcRoot, Dev: h.DevRoot}})
	require.NoError(t, err)
	var want []string
	for _, i := range gpus {
		want = append(want, path.Base(host.GPUs[i].ProcDir))
	}
	wantGPUs := strings.Join(want, "|")
	// node reports whether the probe's ls of /dev/nvidiaN shows the node
	// when GPU n is selected and nothing otherwise.
	node := func(n int, long bool) (bool, string) {
		v := got[fmt.Sprintf("dev%d", n)]
		if !slices.Contains(gpus, n) {
			return strings.Contains(v, "No such file"), "absent (not selected)"
		}
		if !long {
			return v == fmt.Sprintf("/dev/nvidia%d", n), "present"
		}
		return regexp.MustCompile(fmt.Sprintf(`^c.* 195, +%d `, n)).MatchString(v), fmt.Sprintf("character device 195:%d", n)
	}
	dev0, want0 := node(0, true)
	dev1, want1 := node(1, false)
	dev2, want2 := node(2, true)
	open0, wantOpen0 := strings.Contains(got["open0"], "No such device or address"), "ENXIO: allowed by our cgroup rule, no driver behind it"
	if !slices.Contains(gpus, 0) {
		open0, wantOpen0 = strings.Contains(got["open0"], "No such file"), "no node"
	}
	checks := []struct {
		key  string
		ok   bool
		want string
	}{
		{"dev0", dev0, want0},
		{"dev1", dev1, want1},
		{"dev2", dev2, want2},
		{"ctl", regexp.MustCompile(`^c.* 195, +255 `).MatchString(got["ctl"]), "character device 195:255"},
		{"gpus", got["gpus"] == wantGPUs, wantGPUs + " only (the masked /proc/driver/nvidia)"},
		{"params", got["params"] == "ModifyDeviceFiles: 0", "ModifyDeviceFiles: 0"},
		{"smi", got["smi"] == "/usr/bin/nvidia-smi", "present (utility)"},
		{"libcuda", got["libcuda"] == "libcuda.so."+h.DriverVersion, "a link to libcuda.so." + h.DriverVersion},
		{"cudaprog", got["cudaprog"] == "exit 0", "exit 0 (the loader found libcuda.so.1)"},
		{"open0", open0, wantOpen0},
	}
	for _, ck := range checks {
		assert.True(t, ck.ok, "in the container, %s = %q; want %s", ck.key, got[ck.key], ck.want)
	}
}

// removeCgroupParent removes the containers' parent cgroup dockerd made in
// each cgroup v1 hierarchy (and the unified one).
func removeCgroupParent(t *testing.T) {
	dirs, _ := filepath.Glob("/sys/fs/cgroup/*/" + dockerCgroupParent)
	dirs = append(dirs, "/sys/fs/cgroup/"+dockerCgroupParent)
	for _, dir := range dirs {
		if err := os.Remove(dir); err != nil && !os.IsNotExist(err) {
			t.Logf("removing the containers' cgroup parent: %v", err)
		}
	}
}
