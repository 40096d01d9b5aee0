//go:build e2e

package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/moby/sys/mountinfo"
	"github.com/opencontainers/runtime-spec/specs-go"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/go-nvc/nvc/internal/fakehost"
	"github.com/go-nvc/nvc/internal/testutil"
)

// Fixtures of the runc and crun tests: the runtime (with this machine's
// cgroup needs met), a busybox bundle made from `runc spec`, and a hook
// that stands in for the NVIDIA kernel driver's procfs.

// ociRuntime is a low-level OCI runtime, run with a state dir of the
// test's own.
type ociRuntime struct {
	name, path, version, state string
}

// requireRuntime gates on root and the runtime, logs its version and, for
// crun on a hybrid cgroup layout, mounts the hugetlb v1 hierarchy crun
// needs.
func requireRuntime(tb testing.TB, name string) *ociRuntime {
	tb.Helper()
	testutil.RequireRoot(tb)
	path := testutil.RequireCommand(tb, name)
	out, _ := exec.Command(path, "--version").Output()
	version, _, _ := strings.Cut(string(out), "\n")
	tb.Logf("peer: %s", version)
	if name == "crun" {
		ensureHugetlbV1(tb)
	}
	return &ociRuntime{name: name, path: path, version: version, state: tb.TempDir()}
}

// ensureHugetlbV1 mounts the hugetlb controller as a cgroup v1 hierarchy
// when the host's cgroups are hybrid (v1 controllers beside cgroup2 at
// /sys/fs/cgroup/unified) and it is not mounted yet: crun 1.8 refuses every
// container there otherwise ("cgroups in hybrid mode not supported"). The
// mount stays until reboot, as .ci/run's does.
func ensureHugetlbV1(tb testing.TB) {
	tb.Helper()
	mounts, err := mountinfo.GetMounts(nil)
	require.NoError(tb, err)
	hybrid := false
	for _, m := range mounts {
		if m.FSType == "cgroup" && strings.Contains(","+m.VFSOptions+",", ",hugetlb,") {
			return
		}
		hybrid = hybrid || (m.FSType == "cgroup2" && m.Mountpoint == "/sys/fs/cgroup/unified")
	}
	if !hybrid {
		return
	}
	const dir = "/sys/fs/cgroup/hugetlb"
	if err := os.MkdirAll(dir, 0o755); err != nil {
		testutil.Unavailable(tb, "crun needs the hugetlb cgroup v1 hierarchy: %v", err)
	}
	if err := unix.Mount("cgroup", dir, "cgroup", 0, "hugetlb"); err != nil {
		testutil.Unavailable(tb, "crun needs the hugetlb cgroup v1 hierarchy: mounting it: %v", err)
	}
	tb.Logf("mounted the hugetlb cgroup v1 hierarchy at %s for crun", dir)
}

// runArgs are the runtime's arguments for `run` of bundle as id.
func (rt *ociRuntime) runArgs(bundle, id string) []string {
	return []string{"--root", rt.state, "run", "--bundle", bundle, id}
}

// run runs the container with the runtime, or through the wrapper when
// wrapper is set (with config as its config file), and returns the
// container's output. The container is deleted afterwards.
func (rt *ociRuntime) run(tb testing.TB, bundle, id, wrapper, config string) (stdout, stderr string, code int) {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	prog, env := rt.path, []string{"PATH=" + os.Getenv("PATH")}
	if wrapper != "" {
		prog, env = wrapper, append(env, "NVIDIA_CTK_CONFIG_FILE_PATH="+config)
	}
	cmd := exec.CommandContext(ctx, prog, rt.runArgs(bundle, id)...)
	cmd.Env = env
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	exec.Command(rt.path, "--root", rt.state, "delete", "--force", id).Run()
	require.False(tb, ctx.Err() != nil || (err != nil && cmd.ProcessState == nil),
		"%s run %s: %v (ctx %v)\n%s", rt.name, id, err, ctx.Err(), errb.String())
	return out.String(), errb.String(), cmd.ProcessState.ExitCode()
}

// busyboxRootfs builds a Debian-layout rootfs: busybox, the host's dynamic
// loader and libc, an ld.so.conf, and testutil.CUDAProgram (a program that
// needs libcuda.so.1).
func busyboxRootfs(tb testing.TB) string {
	tb.Helper()
	dir := tb.TempDir()
	testutil.BuildTree(tb, dir, `
file    etc/debian_version "12.5\n"
file    etc/ld.so.conf "include /etc/ld.so.conf.d/*.conf\n"
dir     etc/ld.so.conf.d
dir     usr/lib/x86_64-linux-gnu
dir     usr/bin
dir     proc
dir     dev
dir     sys
dir     tmp
symlink bin/sh busybox
`)
	testutil.CopyHostFile(tb, testutil.RequireCommand(tb, "busybox"), filepath.Join(dir, "bin/busybox"), 0o755)
	testutil.AddCUDAProgram(tb, dir)
	return dir
}

// newBundle makes a bundle around rootfs from `runc spec`: root read-write,
// no terminal, the process `sh -c script` with env added to the default
// environment, and hooks.
func newBundle(tb testing.TB, rootfs, script string, env []string, hooks *specs.Hooks) string {
	tb.Helper()
	dir := tb.TempDir()
	out, err := exec.Command(testutil.RequireCommand(tb, "runc"), "spec", "--bundle", dir).CombinedOutput()
	require.NoError(tb, err, "runc spec: %s", out)
	editBundle(tb, dir, func(spec *specs.Spec) {
		spec.Root = &specs.Root{Path: rootfs}
		spec.Process.Terminal = false
		spec.Process.Args = []string{"/bin/sh", "-c", script}
		spec.Process.Env = append(spec.Process.Env, env...)
		spec.Hooks = hooks
	})
	return dir
}

// kernelProcHook is a prestart hook that makes the container's procfs look
// like the simulated host's: it bind-mounts the host's proc/driver over the
// container's /proc/driver, in the container's mount namespace (found from
// the state's pid) before pivot_root. The NVIDIA kernel driver would have
// put /proc/driver/nvidia there; without it our hook's mask has no
// directory to cover.
func kernelProcHook(tb testing.TB, h *fakehost.Host, rootfs string) specs.Hook {
	tb.Helper()
	const script = `pid=$(busybox sed -n 's/.*"pid": *\([0-9]*\).*/\1/p')
exec busybox nsenter -t "$pid" -m busybox mount -o bind "$1" "$2/proc/driver"`
	busybox := testutil.RequireCommand(tb, "busybox")
	return specs.Hook{Path: busybox, Args: []string{"busybox", "sh", "-c", script, "kernel-proc",
		filepath.Join(h.ProcRoot, "driver"), rootfs}, Env: []string{"PATH=/usr/bin:/bin"}}
}

// ourHook is the hook as nvidia-container-runtime registers it: explicit
// environment, the config file as -config.
func ourHook(hook, config, stage string) specs.Hook {
	return specs.Hook{Path: hook, Args: []string{"nvidia-container-runtime-hook", "-config", config, stage},
		Env: []string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin"}}
}

// probeFunc defines the shell function p KEY COMMAND, which prints
// KEY=OUTPUT, the command's output (stderr too) on one line with '|' for
// newlines, as parseProbe reads it.
const probeFunc = `p() { echo "$1=$(eval "$2" 2>&1 | busybox tr '\n' '|')"; }`

// probeScript runs in the container and prints key=value lines about what
// it sees (see parseProbe).
const probeScript = "cd /\n" + probeFunc + `
p dev0 'busybox ls -l /dev/nvidia0'
p dev1 'busybox ls /dev/nvidia1'
p dev2 'busybox ls -l /dev/nvidia2'
p ctl 'busybox ls -l /dev/nvidiactl'
p gpus 'busybox ls /proc/driver/nvidia/gpus'
p params 'busybox grep ModifyDeviceFiles /proc/driver/nvidia/params'
p smi 'busybox ls /usr/bin/nvidia-smi'
p libcuda 'busybox readlink /usr/lib/x86_64-linux-gnu/libcuda.so.1'
p cudaprog '/cudaprog; echo "exit $?"'
p open0 'busybox cat /dev/nvidia0'
`

// parseProbe reads probeScript's output.
func parseProbe(out string) map[string]string {
	m := map[string]string{}
	for _, line := range strings.Split(out, "\n") {
		if k, v, ok := strings.Cut(line, "="); ok {
			m[k] = strings.TrimSuffix(v, "|")
		}
	}
	return m
}
