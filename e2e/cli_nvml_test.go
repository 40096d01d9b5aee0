//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-nvc/nvc/internal/fakehost"
	"github.com/go-nvc/nvc/internal/fakenvml"
	"github.com/go-nvc/nvc/internal/fakenvmllib"
	"github.com/go-nvc/nvc/internal/testutil/container"
)

// nvmlHost is a simulated DGX A100 whose libnvidia-ml.so.1 is a real
// library (internal/fakenvmllib), compiled in C, that reports GPU 0 of the
// host (its UUID; brand Tesla, compute capability 8.0) and whose nvmlInit
// sleeps FAKE_NVML_INIT_DELAY_MS and appends a line to
// FAKE_NVML_INIT_MARK: configure can load it, and the test sees whether it
// started NVML.
func nvmlHost(tb testing.TB, opts *fakehost.Options) *fakehost.Host {
	tb.Helper()
	h := simHost(tb, opts)
	lib := filepath.Join(h.Root, h.LibDir, "libnvidia-ml.so.1")
	require.NoError(tb, os.Remove(lib))
	fakenvmllib.Build(tb, lib, fakenvmllib.Options{Version: h.DriverVersion, UUID: fakenvml.GPUUUID("dgxa100", 0)})
	return h
}

// initMark is a file for the fake NVML's FAKE_NVML_INIT_MARK that the
// CLI's NVML helper, which runs as 65534:65534, can write: in a temp dir
// of mode 1777 (t.TempDir's parent is root's, mode 0700).
func initMark(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "nvc-e2e-nvml-")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	require.NoError(t, os.Chmod(dir, 0o1777))
	return filepath.Join(dir, "nvml-init")
}

// configureWithNVML runs configure of a fresh container on h with the
// fake NVML's init delay, and returns how many times nvmlInit ran.
func configureWithNVML(t *testing.T, h *fakehost.Host, delayMS int, extra ...string) int {
	t.Helper()
	c := container.Start(t, &container.Options{Spec: "file etc/debian_version \"12.5\\n\"\nfile etc/ld.so.cache \"\"\ndir " +
		h.LibDir[1:] + "\ndir usr/bin\ndir proc/driver/nvidia\ndir dev\n"})
	mark := initMark(t)
	args := append(hostFlags(h), "configure", fmt.Sprintf("--pid=%d", c.PID), "--device=0", "--compute", "--utility", "--no-cgroups")
	args = append(append(args, extra...), c.Rootfs)
	env := []string{"PATH=" + os.Getenv("PATH"), fakenvmllib.EnvInitMark + "=" + mark, fmt.Sprintf("%s=%d", fakenvmllib.EnvInitDelayMS, delayMS)}
	_, stderr, code := run(t, env, "", buildExample(t, "nvidia-container-cli", false), args...)
	require.Equal(t, 0, code, "configure %s: exit %d\n%s", strings.Join(extra, " "), code, stderr)
	_, err := os.Stat(filepath.Join(c.HostRootfs, "usr/bin/nvidia-smi"))
	assert.NoError(t, err, "configure %s did not configure", strings.Join(extra, " "))
	data, err := os.ReadFile(mark)
	if os.IsNotExist(err) {
		return 0
	}
	require.NoError(t, err)
	return strings.Count(string(data), "init\n")
}

// TestCLIConfigureNoNVML: configure of a container without a requirement
// on a fact only NVML knows never starts NVML (nvmlInit costs hundreds of
// milliseconds to seconds on a GPU without persistence mode), even with a
// loadable libnvidia-ml.so.1 in the driver root; a container that requires
// brand=tesla or arch>=8.0 (facts procfs lacks) starts it exactly once and
// is configured.
func TestCLIConfigureNoNVML(t *testing.T) {
	h := nvmlHost(t, nil)
	for _, tc := range []struct {
		name  string
		extra []string
		inits int
	}{
		{"no requirement", nil, 0},
		{"driver requirement", []string{"--require=driver>=500"}, 0},
		{"brand", []string{"--require=brand=tesla"}, 1},
		{"arch", []string{"--require=arch>=8.0"}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := configureWithNVML(t, h, 0, tc.extra...)
			assert.Equal(t, tc.inits, n, "configure %s: times nvmlInit ran", strings.Join(tc.extra, " "))
		})
	}
}

// BenchmarkConfigureNVMLDelay is TestCLIConfigureNoNVML's configure (no
// requirement, and brand=tesla, which starts NVML) with nvmlInit taking
// 0, 100 and 500 ms, as on GPUs without persistence mode: the first must
// not grow with the delay. A fresh container per iteration, made with the
// timer stopped.
func BenchmarkConfigureNVMLDelay(b *testing.B) {
	cli := buildExample(b, "nvidia-container-cli", false)
	h := nvmlHost(b, nil)
	for _, req := range []string{"", "brand=tesla"} {
		for _, ms := range []int{0, 100, 500} {
			name := fmt.Sprintf("require=%s/init=%dms", map[bool]string{true: "none", false: req}[req == ""], ms)
			b.Run(name, func(b *testing.B) {
				for b.Loop() {
					b.StopTimer()
					c := container.Start(b, &container.Options{Spec: "file etc/debian_version \"12.5\\n\"\ndir " + h.LibDir[1:] + "\ndir usr/bin\ndir proc/driver/nvidia\n"})
					args := append(hostFlags(h), "configure", fmt.Sprintf("--pid=%d", c.PID), "--device=0", "--compute", "--utility", "--no-cgroups")
					if req != "" {
						args = append(args, "--require="+req)
					}
					cmd := exec.Command(cli, append(args, c.Rootfs)...)
					cmd.Env = []string{"PATH=" + os.Getenv("PATH"), fmt.Sprintf("%s=%d", fakenvmllib.EnvInitDelayMS, ms)}
					b.StartTimer()
					out, err := cmd.CombinedOutput()
					require.NoError(b, err, "configure: %s", out)
				}
			})
		}
	}
}

// TestHookNoNVML: the runtime hook, as nvidia-container-runtime registers
// it (config.toml without an [nvc] backend), configures a runc container
// on a host with a loadable libnvidia-ml.so.1 without starting NVML, and
// starts it once for a container that requires arch>=8.0.
func TestHookNoNVML(t *testing.T) {
	h := nvmlHost(t, nil)
	c := &runtimeCase{t: t, rt: requireRuntime(t, "runc"), host: h, hook: buildExample(t, "nvidia-container-runtime-hook", false)}
	config := autoBackendConfig(t, hookConfig(t, h, nil))
	for _, tc := range []struct {
		name  string
		env   []string
		inits int
	}{
		{"no requirement", []string{"NVIDIA_VISIBLE_DEVICES=0", "NVIDIA_DRIVER_CAPABILITIES=compute,utility"}, 0},
		{"arch", []string{"NVIDIA_VISIBLE_DEVICES=0", "NVIDIA_DRIVER_CAPABILITIES=compute,utility", "NVIDIA_REQUIRE_ARCH=arch>=8.0"}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mark := initMark(t) // the hook's NVML helper runs as 65534:65534
			hook := ourHook(c.hook, config, "prestart")
			hook.Env = append(hook.Env, fakenvmllib.EnvInitMark+"="+mark)
			_, bundle := c.start(t, tc.env, "prestart", hook)
			got := c.probe(t, bundle, "", "")
			assert.Equal(t, "/usr/bin/nvidia-smi", got["smi"], "not configured: nvidia-smi")
			data, _ := os.ReadFile(mark)
			assert.Equal(t, tc.inits, strings.Count(string(data), "init\n"), "times nvmlInit ran")
		})
	}
}

// TestCDIGenerateNoNVML: nvidia-ctk cdi generate writes the spec of a host
// with a loadable libnvidia-ml.so.1 without starting NVML, unless the host
// has MIG devices and the spec names devices by UUID (the default), which
// only NVML knows.
func TestCDIGenerateNoNVML(t *testing.T) {
	ctk := buildExample(t, "nvidia-ctk", false)
	plain := nvmlHost(t, nil)
	mig := nvmlHost(t, &fakehost.Options{MIG: map[int][]string{1: {"3g.20gb", "1g.5gb"}}})
	for _, tc := range []struct {
		name  string
		h     *fakehost.Host
		extra []string
		inits int
	}{
		{"no MIG", plain, nil, 0},
		{"MIG, names by index", mig, []string{"--device-name-strategy=index"}, 0},
		{"MIG, names by UUID", mig, nil, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mark := filepath.Join(t.TempDir(), "nvml-init")
			args := append([]string{"cdi", "generate", "--driver-root", tc.h.Root, "--proc-root", tc.h.ProcRoot,
				"--output", filepath.Join(t.TempDir(), "spec.json")}, tc.extra...)
			env := []string{"PATH=" + os.Getenv("PATH"), fakenvmllib.EnvInitMark + "=" + mark}
			_, stderr, code := run(t, env, "", ctk, args...)
			require.Equal(t, 0, code, "nvidia-ctk %s: exit %d\n%s", strings.Join(args, " "), code, stderr)
			data, _ := os.ReadFile(mark)
			assert.Equal(t, tc.inits, strings.Count(string(data), "init\n"), "times nvmlInit ran")
		})
	}
}

// TestCLIInfoNVMLOnce: info on a host whose driver root has a loadable
// libnvidia-ml.so.1 starts NVML once, and prints NVML's versions: package
// driver reads them, inside device discovery's NVML session
// (nvcontainer.OpenHost), not in a second one.
func TestCLIInfoNVMLOnce(t *testing.T) {
	h := nvmlHost(t, nil)
	mark := initMark(t)
	env := []string{"PATH=" + os.Getenv("PATH"), fakenvmllib.EnvInitMark + "=" + mark}
	stdout, stderr, code := run(t, env, "", buildExample(t, "nvidia-container-cli", false), append(hostFlags(h), "info")...)
	require.Equal(t, 0, code, "info: exit %d\n%s", code, stderr)
	assert.True(t, strings.HasPrefix(stdout, "NVRM version:   "+h.DriverVersion+"\nCUDA version:   12.4\n"), "info:\n%s", stdout)
	data, err := os.ReadFile(mark)
	require.NoError(t, err)
	assert.Equal(t, 1, strings.Count(string(data), "init\n"), "times nvmlInit ran")
}

// TestCLINVMLHelper: the CLI, built without cgo, gets NVML from its helper
// nvc-nvml (next to it), which runs as --user: by default 65534:65534, as
// libnvidia-container's NVML process; the fake nvmlInit's mark file is
// then that user's. NVC_NVML_HELPER names another helper; a missing one
// leaves info on procfs with a warning naming it.
func TestCLINVMLHelper(t *testing.T) {
	h := nvmlHost(t, nil)
	cli := buildExample(t, "nvidia-container-cli", false)
	for _, tc := range []struct {
		name     string
		flags    []string
		helper   string
		uid, gid uint32
	}{
		{"default user", nil, "", 65534, 65534},
		{"--user", []string{"--user=1234:4321"}, "", 1234, 4321},
		{"missing helper", nil, "/nonexistent/nvc-nvml", 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mark := initMark(t)
			env := []string{"PATH=" + os.Getenv("PATH"), fakenvmllib.EnvInitMark + "=" + mark}
			if tc.helper != "" {
				env = append(env, "NVC_NVML_HELPER="+tc.helper)
			}
			stdout, stderr, code := run(t, env, "", cli, append(append(tc.flags, hostFlags(h)...), "info")...)
			require.Equal(t, 0, code, "info: exit %d\n%s", code, stderr)
			fi, err := os.Stat(mark)
			if tc.helper != "" {
				assert.ErrorIs(t, err, os.ErrNotExist, "NVML started")
				assert.Contains(t, stderr, "NVML helper "+tc.helper+": open")
				assert.Contains(t, stdout, "Brand:          N/A")
				return
			}
			require.NoError(t, err, "NVML not started; stderr:\n%s", stderr)
			st := fi.Sys().(*syscall.Stat_t)
			assert.Equal(t, [2]uint32{tc.uid, tc.gid}, [2]uint32{st.Uid, st.Gid}, "owner of the file nvmlInit wrote")
			assert.Contains(t, stdout, "Brand:          Tesla")
		})
	}
}
