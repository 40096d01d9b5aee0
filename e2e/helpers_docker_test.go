//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-nvc/nvc/internal/fakehost"
	"github.com/go-nvc/nvc/internal/testutil"
)

// Fixtures of the Docker tests: a dockerd (with its own containerd) that
// the test starts in a private mount namespace, whose /etc is an overlay
// and whose /run is a tmpfs of its own, so that nothing it writes reaches
// the host; a busybox image imported offline; and kernel-runc, the default
// runtime, which puts the simulated kernel's /proc/driver in each container
// as the NVIDIA driver would (the kernelProcHook of the runc tests, added
// first to the bundle's prestart hooks) and then runs runc.

// dockerDaemon is a dockerd started by the test.
type dockerDaemon struct {
	dir, sock, docker string
	binDir            string // nvidia-container-runtime{,-hook} and kernel-runc
	cmd               *exec.Cmd
	done              chan struct{} // closed when dockerd has exited
	mntNS             string        // the daemon's mount namespace (readlink of ns/mnt)
	env               []string
}

// dockerImage is the image every docker test runs.
const dockerImage = "nvc-e2e-busybox:latest"

// kernelRuncScript is kernel-runc: for create and run (the only commands
// with a bundle) it adds the hook in HOOK_JSON, its last argument made the
// container's absolute rootfs, first among the bundle's prestart hooks.
const kernelRuncScript = `#!/bin/sh
set -e
bundle= prev=
for a in "$@"; do
	case $prev in --bundle|-b) bundle=$a ;; esac
	case $a in --bundle=*) bundle=${a#--bundle=} ;; esac
	prev=$a
done
if [ -n "$bundle" ]; then
	cfg=$bundle/config.json
	root=$(%[1]s -r .root.path "$cfg")
	case $root in /*) ;; *) root=$bundle/$root ;; esac
	%[1]s --slurpfile h %[2]s --arg root "$root" \
		'.hooks.prestart = [($h[0] | .args[-1] = $root)] + (.hooks.prestart // [])' "$cfg" >"$cfg.kernel"
	mv "$cfg.kernel" "$cfg"
fi
exec %[3]s "$@"
`

// newDockerDaemon prepares a daemon's dirs and client environment.
func newDockerDaemon(t *testing.T) *dockerDaemon {
	t.Helper()
	d := &dockerDaemon{dir: dockerTempDir(t), docker: testutil.RequireCommand(t, "docker")}
	d.sock = filepath.Join(d.dir, "docker.sock")
	d.binDir = filepath.Join(d.dir, "bin")
	require.NoError(t, os.MkdirAll(filepath.Join(d.dir, "docker-config"), 0o700))
	d.env = []string{"PATH=" + os.Getenv("PATH"), "DOCKER_HOST=unix://" + d.sock,
		"DOCKER_CONFIG=" + filepath.Join(d.dir, "docker-config")}
	return d
}

// dockerNSScript runs in dockerd's new mount namespace before it: /run
// and /etc (an overlay) become the test's, and the hook's config is put
// where dockerd's hook reads it (dockerd gives the hook no environment).
const dockerNSScript = `set -e
mount -t tmpfs nvc-e2e-run /run
mount -t tmpfs nvc-e2e-etc "$D/etc-ov"
mkdir "$D/etc-ov/upper" "$D/etc-ov/work"
mount -t overlay nvc-e2e-etc -o "lowerdir=/etc,upperdir=$D/etc-ov/upper,workdir=$D/etc-ov/work" /etc
mkdir -p /etc/nvidia-container-runtime
cp "$CONFIG" /etc/nvidia-container-runtime/config.toml
exec "$@"`

// start starts dockerd in a private mount namespace with the bin dir
// (installBins) first in its PATH, the hook's config (config.toml, see
// hookConfig) as /etc/nvidia-container-runtime/config.toml and daemonJSON
// as its config file; it waits until the daemon answers and stops it at
// cleanup.
func (d *dockerDaemon) start(t *testing.T, daemonJSON, config string) {
	t.Helper()
	dockerd := testutil.RequireCommand(t, "dockerd")
	args := []string{"-m", "--propagation", "private", "sh", "-c", dockerNSScript, "dockerd-ns", dockerd,
		"--config-file", daemonJSON, "--storage-driver", "vfs", "--iptables=false", "--ip6tables=false",
		"--bridge=none", "--userland-proxy=false", "--data-root", filepath.Join(d.dir, "data"),
		"--exec-root", filepath.Join(d.dir, "exec"), "-H", "unix://" + d.sock,
		"--pidfile", filepath.Join(d.dir, "docker.pid")}
	d.launch(t, config, args...)
	d.waitReady(t)
}

// launch starts the daemon of args (unshare's, ending in dockerNSScript's
// command) in a private mount namespace with the bin dir (installBins)
// first in its PATH and config as the hook's config.toml, its output in
// dockerd.log; it stops the daemon at cleanup.
func (d *dockerDaemon) launch(t *testing.T, config string, args ...string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Join(d.dir, "etc-ov"), 0o755))
	d.cmd = exec.Command(testutil.RequireCommand(t, "unshare"), args...)
	d.cmd.Env = []string{"PATH=" + d.binDir + ":" + os.Getenv("PATH"), "D=" + d.dir, "CONFIG=" + config}
	logFile, err := os.Create(filepath.Join(d.dir, "dockerd.log"))
	require.NoError(t, err)
	defer logFile.Close()
	d.cmd.Stdout, d.cmd.Stderr = logFile, logFile
	require.NoError(t, d.cmd.Start())
	d.done = make(chan struct{})
	go func() { d.cmd.Wait(); close(d.done) }()
	t.Cleanup(func() { d.stop(t) })
}

// dockerTempDir is a short temp dir: containerd's socket paths under the
// exec root must fit a sockaddr_un.
func dockerTempDir(t *testing.T) string {
	dir, err := os.MkdirTemp("", "nvcdk-")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// installBins puts the programs dockerd finds in its PATH: our hook and
// runtime under their toolkit names, and kernel-runc for host h.
func (d *dockerDaemon) installBins(t *testing.T, h *fakehost.Host, hook, runtime string) string {
	t.Helper()
	require.NoError(t, os.MkdirAll(d.binDir, 0o755))
	require.NoError(t, os.Symlink(hook, filepath.Join(d.binDir, "nvidia-container-runtime-hook")))
	require.NoError(t, os.Symlink(runtime, filepath.Join(d.binDir, "nvidia-container-runtime")))
	hookJSON, err := json.Marshal(kernelProcHook(t, h, "ROOTFS"))
	require.NoError(t, err)
	hookFile := filepath.Join(d.dir, "kernel-proc-hook.json")
	require.NoError(t, os.WriteFile(hookFile, hookJSON, 0o644))
	kernelRunc := filepath.Join(d.binDir, "kernel-runc")
	script := fmt.Sprintf(kernelRuncScript, testutil.RequireCommand(t, "jq"), hookFile, testutil.RequireCommand(t, "runc"))
	require.NoError(t, os.WriteFile(kernelRunc, []byte(script), 0o755))
	return kernelRunc
}

func (d *dockerDaemon) log() string {
	b, _ := os.ReadFile(filepath.Join(d.dir, "dockerd.log"))
	if len(b) > 8000 {
		b = b[len(b)-8000:]
	}
	return string(b)
}

// waitReady waits (30 s at most) until `docker version` reaches the daemon.
func (d *dockerDaemon) waitReady(t *testing.T) {
	t.Helper()
	out := waitDaemon(t, "dockerd", d.cmd, d.done, d.log, func() ([]byte, error) {
		return d.command(nil, "version", "--format", "{{.Server.Version}}").CombinedOutput()
	})
	t.Logf("peer: dockerd %s", strings.TrimSpace(string(out)))
	d.mntNS = daemonMountNS(t, d.cmd)
}

// waitDaemon polls probe (30 s at most) until it succeeds, and fails the
// test when the daemon cmd exits first (done closed) or never answers;
// both failures print the daemon's log. It returns probe's output.
func waitDaemon(t *testing.T, name string, cmd *exec.Cmd, done <-chan struct{}, log func() string, probe func() ([]byte, error)) []byte {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		out, err := probe()
		if err == nil {
			return out
		}
		if time.Now().After(deadline) {
			require.Failf(t, name+" did not come up in 30 s", "%v: %s\n%s log:\n%s", err, out, name, log())
		}
		select {
		case <-done:
			require.Failf(t, name+" exited", "%v\n%s log:\n%s", cmd.ProcessState, name, log())
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// daemonMountNS is the daemon's mount namespace (readlink of ns/mnt).
func daemonMountNS(t *testing.T, cmd *exec.Cmd) string {
	t.Helper()
	ns, err := os.Readlink(fmt.Sprintf("/proc/%d/ns/mnt", cmd.Process.Pid))
	require.NoError(t, err)
	return ns
}

// command is the docker client, talking to this daemon, with env added.
func (d *dockerDaemon) command(env []string, args ...string) *exec.Cmd {
	cmd := exec.Command(d.docker, args...)
	cmd.Env = append(slices.Clone(d.env), env...)
	return cmd
}

// run runs the docker client (or prog with the daemon's environment) and
// returns its stdout, stderr and exit status, within 60 s.
func (d *dockerDaemon) run(t *testing.T, prog string, env []string, args ...string) (string, string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if prog == "" {
		prog = d.docker
	}
	cmd := exec.CommandContext(ctx, prog, args...)
	cmd.Env = append(slices.Clone(d.env), env...)
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	require.False(t, ctx.Err() != nil || (err != nil && cmd.ProcessState == nil), "%s %q: %v\n%s", prog, args, err, errb.String())
	return out.String(), errb.String(), cmd.ProcessState.ExitCode()
}

// importImage imports rootfs as dockerImage.
func (d *dockerDaemon) importImage(t *testing.T, rootfs string) {
	t.Helper()
	tar := exec.Command(testutil.RequireCommand(t, "tar"), "-C", rootfs, "-c", ".")
	imp := d.command(nil, "import", "-", dockerImage)
	pipe, err := tar.StdoutPipe()
	require.NoError(t, err)
	imp.Stdin = pipe
	require.NoError(t, tar.Start())
	out, err := imp.CombinedOutput()
	require.NoError(t, tar.Wait())
	require.NoError(t, err, "docker import: %s", out)
}

// stop removes every container, stops dockerd (SIGTERM, then SIGKILL after
// 20 s) and then ends whatever is left in its mount namespace (containerd,
// shims), so that the namespace and its mounts go away.
func (d *dockerDaemon) stop(t *testing.T) {
	select {
	case <-d.done:
	default:
		if ids, err := d.command(nil, "ps", "-aq").Output(); err == nil && len(strings.Fields(string(ids))) > 0 {
			d.command(nil, append([]string{"rm", "-f"}, strings.Fields(string(ids))...)...).Run()
		}
		d.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-d.done:
		case <-time.After(20 * time.Second):
			t.Logf("dockerd ignored SIGTERM for 20 s; killing it")
			d.cmd.Process.Kill()
			<-d.done
		}
	}
	if d.mntNS == "" {
		return
	}
	deadline := time.Now().Add(10 * time.Second)
	for pids := d.nsProcesses(); len(pids) > 0; pids = d.nsProcesses() {
		sig := syscall.SIGTERM
		if time.Now().After(deadline) {
			sig = syscall.SIGKILL
		}
		for _, pid := range pids {
			syscall.Kill(pid, sig)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// nsProcesses are the processes in the daemon's mount namespace.
func (d *dockerDaemon) nsProcesses() []int {
	var pids []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		var pid int
		if _, err := fmt.Sscan(e.Name(), &pid); err != nil || pid == os.Getpid() {
			continue
		}
		if ns, err := os.Readlink(fmt.Sprintf("/proc/%d/ns/mnt", pid)); err == nil && ns == d.mntNS {
			pids = append(pids, pid)
		}
	}
	return pids
}

// hostState is what a docker test must leave as it found it: the mount
// table (other tests' temp mounts left out) and the dirs Docker and
// containerd would write on a host.
func hostState(t *testing.T) []string {
	t.Helper()
	data, err := os.ReadFile("/proc/self/mountinfo")
	require.NoError(t, err)
	var state []string
	tmp := filepath.Clean(os.TempDir()) + "/"
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		f := strings.Fields(line)
		if len(f) < 5 || (strings.HasPrefix(f[4], tmp) && !strings.HasPrefix(f[4], tmp+"nvcdk-")) {
			continue
		}
		state = append(state, "mount "+strings.Join(f[3:5], " ")+" "+strings.Join(f[slices.Index(f, "-"):], " "))
	}
	for _, dir := range []string{"/etc/docker", "/etc/nvidia-container-runtime", "/run/docker", "/run/containerd",
		"/run/docker.sock", "/var/lib/docker", "/var/lib/containerd", "/run/nvidia", "/proc/driver"} {
		filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
			if err != nil {
				state = append(state, "path "+p+" "+err.Error())
				return nil
			}
			state = append(state, fmt.Sprintf("path %s %v %d", p, fi.Mode(), fi.Size()))
			return nil
		})
	}
	slices.Sort(state)
	return state
}

// checkHostUnchanged compares hostState with before.
func checkHostUnchanged(t *testing.T, before []string) {
	t.Helper()
	after := hostState(t)
	var diff []string
	for _, s := range before {
		if !slices.Contains(after, s) {
			diff = append(diff, "- "+s)
		}
	}
	for _, s := range after {
		if !slices.Contains(before, s) {
			diff = append(diff, "+ "+s)
		}
	}
	assert.Empty(t, diff, "the host changed (mount table, Docker's dirs):\n%s", strings.Join(diff, "\n"))
}
