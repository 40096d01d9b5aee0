//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/BurntSushi/toml"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-nvc/nvc/internal/fakehost"
	"github.com/go-nvc/nvc/internal/testutil"
)

// containerdNamespace is the containerd namespace (and cgroup parent) of
// the test's containers.
const containerdNamespace = "nvc-e2e"

// userContainerdConfig is the version 2 config.toml an operator of
// containerd 1.6 had before `nvidia-ctk runtime configure`: runc with
// systemd cgroups off, a sandbox image, a top-level key.
const userContainerdConfig = `version = 2
oom_score = -500

[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "nvc-e2e/pause:1"
[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
  runtime_type = "io.containerd.runc.v2"
[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
  SystemdCgroup = false
`

// TestContainerd writes containerd 1.6's config.toml with our `nvidia-ctk
// runtime configure --runtime=containerd --set-as-default`, checks that
// `containerd config dump` reads the nvidia runtime from it, starts
// containerd on that config in a private mount namespace (the docker
// test's), and runs busybox with `ctr run --runc-binary` our
// nvidia-container-runtime in legacy mode (the hook drives our CLI) and in
// jit-cdi mode (the spec made in process), each checked from inside
// (GPUs 0 and 2 only, nvidia-smi, libcuda.so.1 through the loader cache,
// ENXIO from /dev/nvidia0) and the host's mount table and dirs compared
// before and after.
func TestContainerd(t *testing.T) {
	testutil.RequireRoot(t)
	containerd := testutil.RequireCommand(t, "containerd")
	ctr := testutil.RequireCommand(t, "ctr")
	start := time.Now()
	before := hostState(t)
	h := simHost(t, nil)
	hook := buildExample(t, "nvidia-container-runtime-hook", false)
	runtime := buildExample(t, "nvidia-container-runtime", false)
	ctk := buildExample(t, "nvidia-ctk", false)
	cdiHook := staticExample(t, "nvidia-cdi-hook")

	d := newDockerDaemon(t)
	kernelRunc := d.installBins(t, h, hook, runtime)
	require.NoError(t, os.Symlink(cdiHook, filepath.Join(d.binDir, "nvidia-cdi-hook")))
	configTOML := filepath.Join(d.dir, "config.toml")
	require.NoError(t, os.WriteFile(configTOML, []byte(userContainerdConfig), 0o644))
	out, err := exec.Command(ctk, "runtime", "configure", "--runtime=containerd", "--config", configTOML, "--set-as-default").CombinedOutput()
	require.NoError(t, err, "nvidia-ctk runtime configure: %s", out)
	checkContainerdConfig(t, containerd, configTOML)

	legacy := hookConfig(t, h, nil, "[nvidia-container-runtime]", `mode = "legacy"`, "runtimes = ["+quote(kernelRunc)+"]",
		"[nvidia-container-runtime-hook]", "path = "+quote(hook))
	jit := hookConfig(t, h, nil, "[nvidia-container-runtime]", `mode = "jit-cdi"`, "runtimes = ["+quote(kernelRunc)+"]")
	// jit-cdi's runtime reads its config from NVIDIA_CTK_CONFIG_FILE_PATH;
	// the shim gives it containerd's environment, so a wrapper sets it.
	jitRuntime := filepath.Join(d.binDir, "nvidia-container-runtime-jit")
	require.NoError(t, os.WriteFile(jitRuntime, []byte(fmt.Sprintf("#!/bin/sh\nNVIDIA_CTK_CONFIG_FILE_PATH=%s exec %s \"$@\"\n", jit, runtime)), 0o755))

	startContainerd(t, d, containerd, configTOML, legacy)
	t.Cleanup(func() { removeCgroupDirs(t, containerdNamespace) })
	t.Logf("containerd ready: %v", time.Since(start).Round(time.Millisecond))

	modes := []struct{ name, runtime string }{
		{"legacy", filepath.Join(d.binDir, "nvidia-container-runtime")},
		{"jit-cdi", jitRuntime},
	}
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			// --fifo-dir: ctr runs on the host, and its default
			// (/run/containerd/fifo) would be made there.
			rootfs := busyboxRootfs(t)
			args := []string{"-a", d.sock, "-n", containerdNamespace, "run", "--rm", "--rootfs", "--runc-binary", m.runtime,
				"--fifo-dir", filepath.Join(d.dir, "fifo"),
				"--env", gpuEnv[0], "--env", gpuEnv[1], rootfs, "nvc-" + m.name, "/bin/sh", "-c", probeScript}
			stdout, stderr, code := d.run(t, ctr, nil, args...)
			require.Equal(t, 0, code, "ctr %q: exit %d\nstdout:\n%s\nstderr:\n%s\ncontainerd log:\n%s", args, code, stdout, stderr, d.log())
			t.Logf("container output:\n%s", stdout)
			checkContainerdGPUs(t, h, parseProbe(stdout), m.name == "legacy")
			checkCacheListsLibcuda(t, rootfs, "/usr/lib/x86_64-linux-gnu")
			assert.Empty(t, testutil.MountsBelow(t, rootfs), "mounts left on the host under the rootfs")
		})
		t.Run(m.name+"-unmet-requirement", func(t *testing.T) { runContainerdUnmet(t, d, ctr, m.name, m.runtime) })
	}
	d.stop(t)
	checkHostUnchanged(t, before)
}

// runContainerdUnmet runs a CUDA image's environment (NVIDIA_REQUIRE_CUDA
// above the driver's CUDA) with ctr through runtime: the hook (legacy) or
// the runtime's plan (jit-cdi) refuses with the requirement error, which
// ctr reports, and the container's command never runs.
func runContainerdUnmet(t *testing.T, d *dockerDaemon, ctr, mode, runtime string) {
	args := []string{"-a", d.sock, "-n", containerdNamespace, "run", "--rm", "--rootfs", "--runc-binary", runtime,
		"--fifo-dir", filepath.Join(d.dir, "fifo"), "--env", "NVIDIA_VISIBLE_DEVICES=0", "--env", "NVIDIA_REQUIRE_CUDA=cuda>=99.0",
		busyboxRootfs(t), "nvc-unmet-" + mode, "/bin/sh", "-c", "echo ran"}
	stdout, stderr, code := d.run(t, ctr, nil, args...)
	const msg = "requirement error: unsatisfied condition: cuda>=99.0"
	why := fmt.Sprintf("ctr %s: exit %d, stdout %q, stderr %q; want the requirement error and no container", mode, code, stdout, stderr)
	assert.NotEqual(t, 0, code, why)
	assert.NotContains(t, stdout, "ran", why)
	assert.Contains(t, stderr, msg, why)
}

// startContainerd starts containerd on config in the docker test's private
// mount namespace (its /run a tmpfs, /etc an overlay with the hook's
// config), state and root in d.dir, listening on d.sock; it waits until
// ctr reaches it. d.stop ends it and whatever is left in its namespace.
func startContainerd(t *testing.T, d *dockerDaemon, containerd, config, hookConfig string) {
	t.Helper()
	d.sock = filepath.Join(d.dir, "containerd.sock")
	d.launch(t, hookConfig, "-m", "--propagation", "private", "sh", "-c", dockerNSScript, "containerd-ns", containerd,
		"--config", config, "--root", filepath.Join(d.dir, "root"), "--state", filepath.Join(d.dir, "state"),
		"--address", d.sock)
	ctr := testutil.RequireCommand(t, "ctr")
	waitDaemon(t, "containerd", d.cmd, d.done, d.log, func() ([]byte, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		return exec.CommandContext(ctx, ctr, "-a", d.sock, "version").CombinedOutput()
	})
	d.mntNS = daemonMountNS(t, d.cmd)
}

// checkContainerdConfig checks what runtime configure wrote, as containerd
// reads it (`containerd config dump`): the nvidia runtime with our runtime
// as its binary, the default runtime, runc and the user's keys kept.
func checkContainerdConfig(t *testing.T, containerd, file string) {
	t.Helper()
	out, err := exec.Command(containerd, "--config", file, "config", "dump").Output()
	require.NoError(t, err, "containerd config dump")
	var dump map[string]any
	_, err = toml.Decode(string(out), &dump)
	require.NoError(t, err, "%s", out)
	cri := dump["plugins"].(map[string]any)["io.containerd.grpc.v1.cri"].(map[string]any)
	ctrd := cri["containerd"].(map[string]any)
	rts := ctrd["runtimes"].(map[string]any)
	require.Contains(t, rts, "nvidia", "containerd config dump:\n%s", out)
	nvidia := rts["nvidia"].(map[string]any)
	assert.Equal(t, "io.containerd.runc.v2", nvidia["runtime_type"])
	assert.Equal(t, map[string]any{"BinaryName": "nvidia-container-runtime", "SystemdCgroup": false}, nvidia["options"])
	assert.Equal(t, "nvidia", ctrd["default_runtime_name"])
	assert.Equal(t, map[string]any{"SystemdCgroup": false}, rts["runc"].(map[string]any)["options"])
	assert.Equal(t, "nvc-e2e/pause:1", cri["sandbox_image"])
	assert.Equal(t, int64(-500), dump["oom_score"])
}

// checkContainerdGPUs checks a container's view of GPUs 0 and 2
// (gpuEnv); legacy mode also masks /proc/driver/nvidia down to them.
func checkContainerdGPUs(t *testing.T, h *fakehost.Host, got map[string]string, legacy bool) {
	t.Helper()
	if legacy {
		checkDockerGPUs(t, h, got, []int{0, 2})
		return
	}
	assertProbe(t, got, gpus02Checks(got, h.DriverVersion))
}

// removeCgroupDirs removes the containers' parent cgroup name in each
// cgroup v1 hierarchy (and the unified one).
func removeCgroupDirs(t *testing.T, name string) {
	dirs, _ := filepath.Glob("/sys/fs/cgroup/*/" + name)
	dirs = append(dirs, "/sys/fs/cgroup/"+name)
	for _, dir := range dirs {
		if err := os.Remove(dir); err != nil && !os.IsNotExist(err) {
			t.Logf("removing the containers' cgroup parent: %v", err)
		}
	}
}
