package devices_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/go-nvc/nvc/devices"
	"github.com/go-nvc/nvc/driver"
	"github.com/go-nvc/nvc/internal/fakenvmllib"
	"github.com/go-nvc/nvc/internal/testutil"
)

// helperHost builds the helper and a driver root (a 0700 temp dir, as
// root's) whose libnvidia-ml.so.1 is fakenvmllib's, and returns both.
func helperHost(t *testing.T) (helper, root string) {
	t.Helper()
	root = t.TempDir()
	fakenvmllib.Build(t, filepath.Join(root, "usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1"), fakenvmllib.Options{Version: "550.54.15"})
	helper = filepath.Join(t.TempDir(), "nvc-nvml")
	testutil.GoBuild(t, "..", "./examples/nvc-nvml", helper, "CGO_ENABLED=1") // the helper needs cgo
	return helper, root
}

// sharedDir is a temp dir the helper's user can write in (t.TempDir's
// parent is root's, mode 0700).
func sharedDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "nvc-nvml-test-")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	require.NoError(t, os.Chmod(dir, 0o1777))
	return dir
}

// statusOf is what the fake nvmlInit_v2 saw in /proc/thread-self/status:
// the fields name → value, whitespace collapsed.
func statusOf(t *testing.T, path string) map[string]string {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err, "nvmlInit_v2 wrote no status")
	m := map[string]string{}
	space := regexp.MustCompile(`\s+`)
	for _, l := range strings.Split(string(data), "\n") {
		if k, v, ok := strings.Cut(l, ":"); ok {
			m[k] = space.ReplaceAllString(strings.TrimSpace(v), " ")
		}
	}
	return m
}

// TestHelperDropsPrivileges: run by root through devices.NewNVMLHelper,
// the helper answers from a library in a driver root only root can
// search, and NVML's code (the fake nvmlInit_v2, which records its
// thread's status) runs as the identity asked (default: the overflow ids,
// 65534) without supplementary groups, with no capability and with
// NoNewPrivs set; asked to stay root (--user=0:0), it still runs without
// capabilities.
func TestHelperDropsPrivileges(t *testing.T) {
	testutil.RequireRoot(t)
	helper, root := helperHost(t)
	out := sharedDir(t)
	for _, tc := range []struct {
		name, user, ids string
	}{
		{"default: overflow ids", "", "65534 65534 65534 65534"},
		{"numeric", "1234:4321", ""},
		{"root", "0:0", "0 0 0 0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status := filepath.Join(out, strings.ReplaceAll(tc.name, " ", "_"))
			t.Setenv(fakenvmllib.EnvInitStatus, status)
			lib := devices.NewNVMLHelper(&devices.NVMLHelperOptions{Path: helper, Roots: driver.Roots{Driver: root}, User: tc.user})
			require.NoError(t, lib.Init())
			v, err := lib.SystemDriverVersion()
			require.NoError(t, err)
			assert.Equal(t, "550.54.15", v)
			s := statusOf(t, status)
			uid, gid := tc.ids, tc.ids
			if tc.user == "1234:4321" {
				uid, gid = "1234 1234 1234 1234", "4321 4321 4321 4321"
			}
			assert.Equal(t, uid, s["Uid"], "uid")
			assert.Equal(t, gid, s["Gid"], "gid")
			assert.Empty(t, s["Groups"], "supplementary groups")
			for _, c := range []string{"CapPrm", "CapEff", "CapInh", "CapAmb"} {
				assert.Equal(t, "0000000000000000", s[c], c)
			}
			assert.Equal(t, "1", s["NoNewPrivs"], "NoNewPrivs")
		})
	}
}

// script writes an executable shell script into a temp dir and returns
// its path.
func script(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "helper")
	require.NoError(t, os.WriteFile(p, []byte("#!/bin/sh\n"+body+"\n"), 0o755))
	return p
}

// TestHelperFailures: a helper that is missing, fails, crashes, outlives
// its timeout or writes something else than a snapshot (or one too big to
// decode at little cost) makes Init fail with an error naming the helper,
// why, and its stderr (the first 4 KiB); every Init gives
// that error (the helper runs once); Discover's Auto backend then
// discovers through procfs, and NVML fails with ErrNVMLUnavailable.
func TestHelperFailures(t *testing.T) {
	h := genHost(t, nil)
	missing := filepath.Join(t.TempDir(), "nvc-nvml")
	count := filepath.Join(sharedDir(t), "runs")
	fifo := filepath.Join(t.TempDir(), "fifo")
	require.NoError(t, unix.Mkfifo(fifo, 0o755))
	for _, tc := range []struct {
		name, path string
		timeout    time.Duration
		want       []string
	}{
		{"missing", missing, 0, []string{missing, "no such file"}},
		{"fails", script(t, "echo >>"+count+"; echo 'nvmlInit: driver not loaded' >&2; exit 3"), 0, []string{"exit status 3", "driver not loaded"}},
		{"crashes", script(t, "kill -SEGV $$"), 0, []string{"signal: segmentation fault"}},
		{"hangs", script(t, "exec sleep 5"), 200 * time.Millisecond, []string{"timed out after 200ms"}},
		{"garbage", script(t, "echo hello"), 0, []string{"as an NVML snapshot", "invalid character"}},
		{"not a snapshot", script(t, `echo '{"gpus": 8}'`), 0, []string{"as an NVML snapshot", "unknown field"}},
		{"empty", script(t, "true"), 0, []string{"as an NVML snapshot", "EOF"}},
		{"two snapshots", script(t, `echo '{"driverVersion":{"value":"1"},"cudaDriverVersion":{"value":1}}{}'`), 0, []string{"data after the snapshot"}},
		{"snapshot too big", script(t, `printf '{"driverVersion":{"value":"1"},"cudaDriverVersion":{"value":1},"devices":['; yes '{},' | head -n 100000 | tr -d '\n'; echo '{}]}'`), 0, []string{"output over 256 KiB"}},
		{"a FIFO", fifo, 0, []string{fifo, "not a regular file"}},
		{"control characters", script(t, `printf 'bad\033[2Jnews\n' >&2; exit 1`), 0, []string{`"bad\x1b[2Jnews"`}},
		{"stderr flood", script(t, `head -c 1048576 /dev/zero | tr '\0' x >&2; exit 1`), 0, []string{"exit status 1", "xxx", "stderr cut at 4096 bytes"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lib := devices.NewNVMLHelper(&devices.NVMLHelperOptions{Path: tc.path, Roots: driver.Roots{Driver: h.Root}, Timeout: tc.timeout})
			start := time.Now()
			err := lib.Init()
			require.Error(t, err)
			assert.Less(t, time.Since(start), 3*time.Second, "Init waited for the hung helper")
			assert.ErrorContains(t, err, "NVML helper "+tc.path)
			assert.Less(t, len(err.Error()), 8<<10, "the error's length")
			for _, w := range tc.want {
				assert.ErrorContains(t, err, w)
			}
			assert.Equal(t, err, lib.Init(), "second Init")
			_, verr := lib.SystemDriverVersion()
			assert.Equal(t, err, verr, "a call after the failed Init")

			o := optionsFor(h, devices.Auto)
			o.NVML = lib
			d, derr := devices.Discover(context.Background(), o)
			require.NoError(t, derr, "Auto")
			assert.Equal(t, devices.Procfs, d.Backend, "Auto's backend")
			assert.Contains(t, d.NVMLError, tc.path, "Auto's NVML error")
			o.Backend = devices.NVML
			_, derr = devices.Discover(context.Background(), o)
			assert.ErrorIs(t, derr, devices.ErrNVMLUnavailable, "NVML backend")
		})
	}
	data, err := os.ReadFile(count)
	require.NoError(t, err)
	assert.Equal(t, "\n", string(data), "the failing helper ran more than once")
}

// TestHelperDiscovers: Discover with the real helper (examples/nvc-nvml)
// and a driver root whose libnvidia-ml.so.1 is fakenvmllib's finds its
// GPU with NVML's facts, and the helper runs only at Init; what the
// library prints on stdout does not spoil the snapshot.
func TestHelperDiscovers(t *testing.T) {
	testutil.RequireRoot(t)
	helper, root := helperHost(t)
	h := genHost(t, nil)
	mark := filepath.Join(sharedDir(t), "mark")
	t.Setenv(fakenvmllib.EnvInitMark, mark)
	t.Setenv(fakenvmllib.EnvInitPrint, "NVML says hello on stdout\n")
	lib := devices.NewNVMLHelper(&devices.NVMLHelperOptions{Path: helper, Roots: driver.Roots{Driver: root}})
	_, err := os.Stat(mark)
	require.ErrorIs(t, err, os.ErrNotExist, "the helper ran before Init")
	o := optionsFor(h, devices.Auto)
	o.NVML = lib
	d, err := devices.Discover(context.Background(), o)
	require.NoError(t, err)
	assert.Equal(t, devices.NVML, d.Backend, "backend; NVML error %s", d.NVMLError)
	require.Len(t, d.GPUs, 1)
	assert.Equal(t, "Tesla", d.GPUs[0].Brand)
	assert.Equal(t, "8.0", d.GPUs[0].ComputeCapability)
	data, err := os.ReadFile(mark)
	require.NoError(t, err)
	assert.Equal(t, "init\n", string(data), "nvmlInit runs")
}

// envTraceDir, in a re-run of TestHelperNotReaped, makes it the tracer: it
// seizes the pid written in that directory's file "pid", says so with
// the file "seized", and holds the tracee for tracerHold without ever
// waiting for it.
const envTraceDir = "NVC_TEST_TRACE_DIR"

const tracerHold = 10 * time.Second

// TestHelperNotReaped: a helper that SIGKILL does not end at once (as one
// stuck in an uninterruptible driver call; here one whose tracer, another
// process, holds its exit) does not hold Init past its timeout and a
// short grace.
func TestHelperNotReaped(t *testing.T) {
	if dir := os.Getenv(envTraceDir); dir != "" {
		traceHelper(t, dir)
		return
	}
	testutil.RequireRoot(t)
	dir := sharedDir(t)
	helper := script(t, fmt.Sprintf(`echo $$ >%[1]s/pid.tmp && mv %[1]s/pid.tmp %[1]s/pid
i=0; while [ ! -e %[1]s/seized ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i+1)); done
exec sleep 30`, dir))
	tracer := exec.Command(os.Args[0], "-test.run=^TestHelperNotReaped$", "-test.v")
	tracer.Env = append(os.Environ(), envTraceDir+"="+dir)
	var out strings.Builder
	tracer.Stdout, tracer.Stderr = &out, &out
	require.NoError(t, tracer.Start())
	t.Cleanup(func() {
		tracer.Process.Kill()
		tracer.Wait()
		t.Logf("tracer: %s", out.String())
	})
	lib := devices.NewNVMLHelper(&devices.NVMLHelperOptions{Path: helper, Timeout: time.Second})
	start := time.Now()
	err := lib.Init()
	took := time.Since(start)
	if _, err := os.Stat(filepath.Join(dir, "seized")); err != nil {
		tracer.Process.Kill()
		tracer.Wait()
		if strings.Contains(out.String(), "operation not permitted") {
			testutil.Unavailable(t, "ptrace refused:\n%s", out.String())
		}
		require.NoError(t, err, "the tracer did not seize the helper:\n%s", out.String())
	}
	require.Error(t, err)
	assert.ErrorContains(t, err, "timed out after 1s")
	assert.Less(t, took, tracerHold-4*time.Second, "Init waited for the helper's tracer to let it go")
}

// traceHelper is TestHelperNotReaped's tracer.
func traceHelper(t *testing.T, dir string) {
	var pid int
	for range 200 {
		data, err := os.ReadFile(filepath.Join(dir, "pid"))
		if err == nil {
			pid, err = strconv.Atoi(strings.TrimSpace(string(data)))
			require.NoError(t, err)
			break
		}
		time.Sleep(25 * time.Millisecond)
	}
	require.NotZero(t, pid, "no helper pid")
	runtime.LockOSThread() // the tracer is this thread
	require.NoError(t, unix.PtraceSeize(pid), "seizing %d", pid)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "seized"), nil, 0o644))
	time.Sleep(tracerHold)
}

// TestHelperNotDumpable: NVML's code runs in a helper that is not
// dumpable (its /proc files are root's), so that no other process of its
// user may ptrace it and change its answers.
func TestHelperNotDumpable(t *testing.T) {
	testutil.RequireRoot(t)
	helper, root := helperHost(t)
	status := filepath.Join(sharedDir(t), "status")
	t.Setenv(fakenvmllib.EnvInitStatus, status)
	t.Setenv(fakenvmllib.EnvInitDelayMS, "1500")
	lib := devices.NewNVMLHelper(&devices.NVMLHelperOptions{Path: helper, Roots: driver.Roots{Driver: root}})
	done := make(chan error, 1)
	go func() { done <- lib.Init() }()
	var pid string
	for start := time.Now(); pid == "" && time.Since(start) < 5*time.Second; time.Sleep(10 * time.Millisecond) {
		if data, err := os.ReadFile(status); err == nil && strings.Contains(string(data), "\nUid:") {
			pid = statusOf(t, status)["Tgid"]
		}
	}
	require.NotEmpty(t, pid, "nvmlInit_v2 wrote no status")
	var st unix.Stat_t
	require.NoError(t, unix.Stat("/proc/"+pid+"/status", &st))
	assert.Equal(t, "65534 65534 65534 65534", statusOf(t, status)["Uid"], "the helper's uids")
	assert.Equal(t, uint32(0), st.Uid, "owner of the helper's /proc/%s/status (root: not dumpable)", pid)
	require.NoError(t, <-done)
}

// TestHelperInheritsNoDescriptors: a descriptor of the caller without
// close-on-exec (Go's exec passes those on) is not open in the helper
// when NVML's code runs: nvc-nvml closes every descriptor above 3 first.
func TestHelperInheritsNoDescriptors(t *testing.T) {
	testutil.RequireRoot(t)
	helper, root := helperHost(t)
	var leaked []int
	for _, at := range []int{-1, 200} {
		fd, err := unix.Open("/dev/null", unix.O_RDONLY, 0) // no O_CLOEXEC
		require.NoError(t, err)
		if at >= 0 {
			require.NoError(t, unix.Dup3(fd, at, 0))
			unix.Close(fd)
			fd = at
		}
		t.Cleanup(func() { unix.Close(fd) })
		leaked = append(leaked, fd)
	}
	list := filepath.Join(sharedDir(t), "fds")
	t.Setenv(fakenvmllib.EnvInitFds, list)
	lib := devices.NewNVMLHelper(&devices.NVMLHelperOptions{Path: helper, Roots: driver.Roots{Driver: root}})
	require.NoError(t, lib.Init())
	data, err := os.ReadFile(list)
	require.NoError(t, err, "nvmlInit_v2 listed no descriptors")
	open := strings.Fields(string(data))
	require.Contains(t, open, "0", "the listing works")
	for _, fd := range leaked {
		assert.NotContains(t, open, strconv.Itoa(fd), "the caller's descriptor %d reached NVML's code (open: %v)", fd, open)
	}
}

// TestHelperTimeoutKillsGroup: at the timeout the helper's whole process
// group is killed, not only the helper: a child it started is gone too.
func TestHelperTimeoutKillsGroup(t *testing.T) {
	h := genHost(t, nil)
	pidFile := filepath.Join(sharedDir(t), "child")
	helper := script(t, "sleep 30 & echo $! >"+pidFile+"; wait")
	lib := devices.NewNVMLHelper(&devices.NVMLHelperOptions{Path: helper, Roots: driver.Roots{Driver: h.Root}, Timeout: 300 * time.Millisecond})
	require.ErrorContains(t, lib.Init(), "timed out")
	data, err := os.ReadFile(pidFile)
	require.NoError(t, err, "the helper started no child")
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		st, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		return err != nil || strings.Contains(string(st), ") Z ")
	}, 3*time.Second, 20*time.Millisecond, "the helper's child %d outlived the timeout", pid)
}
