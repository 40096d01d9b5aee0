package cdihook

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/go-nvc/nvc/internal/testutil"
	"github.com/go-nvc/nvc/internal/testutil/container"
)

// The test binary runs DisableDeviceNodeModification as a hook would when
// these are set (see TestMain): envAsHook names the mask method, envDeny
// a system call to deny first, envProcRoot the host's procfs.
const (
	envAsHook   = "NVC_CDIHOOK_TEST_AS_HOOK"
	envDeny     = "NVC_CDIHOOK_TEST_DENY"
	envProcRoot = "NVC_CDIHOOK_TEST_PROC_ROOT"
)

var maskMethods = map[string]maskMethod{"auto": maskAuto, "detached": maskDetached, "via-parent": maskViaParent}

// runAsHook is the program run with a mask method, in a process the test
// started inside a test container's mount namespace: the state on stdin,
// the outcome on stderr, exit 1 on error.
func runAsHook(how maskMethod) int {
	if os.Getenv(envDeny) == "fsopen" {
		if err := container.DenySyscalls(unix.SYS_FSOPEN); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 2
		}
	}
	ctx := context.Background()
	root, err := ContainerRoot(ctx, os.Stdin)
	if err == nil {
		var res DeviceNodeResult
		res, err = DisableDeviceNodeModification(ctx, root, &DeviceNodeOptions{ProcRoot: os.Getenv(envProcRoot), mask: how})
		fmt.Fprintf(os.Stderr, "masked=%v skipped=%q\n", res.Masked, res.Skipped)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// hookIn runs this test binary as the hook in c's mount namespace (as a
// runtime runs a createContainer hook: before pivot_root, host paths
// visible) with the host procfs proc, and returns its exit status and
// stderr.
func hookIn(t *testing.T, c *container.Container, how string, env []string, proc string) (int, string) {
	t.Helper()
	nsenter := testutil.RequireCommand(t, "nsenter")
	cmd := exec.Command(nsenter, "-t", strconv.Itoa(c.PID), "-m", "--", os.Args[0])
	cmd.Env = append([]string{envAsHook + "=" + how, envProcRoot + "=" + proc}, env...)
	cmd.Stdin = strings.NewReader(`{"bundle":"/x","root":"` + c.Rootfs + `"}`)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	err := cmd.Run()
	require.NotNil(t, cmd.ProcessState, "running the hook: %v", err)
	return cmd.ProcessState.ExitCode(), stderr.String()
}

func TestDisableModify(t *testing.T) {
	tests := []struct {
		in, want string
		changed  bool
	}{
		{"ResmanDebugLevel: 4294967295\nModifyDeviceFiles: 1\nDeviceFileUID: 0\n", "ResmanDebugLevel: 4294967295\nModifyDeviceFiles: 0\nDeviceFileUID: 0\n", true},
		{"ModifyDeviceFiles: 1", "ModifyDeviceFiles: 0", true},
		{"ModifyDeviceFiles: 0\n", "ModifyDeviceFiles: 0\n", false},
		{"ModifyDeviceFiles: 10\n", "ModifyDeviceFiles: 10\n", false},
		{"XModifyDeviceFiles: 1\n", "XModifyDeviceFiles: 1\n", false},
		{"", "", false},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%q", tt.in), func(t *testing.T) {
			got, changed := disableModify([]byte(tt.in))
			assert.Equal(t, tt.want, string(got), "disableModify(%q)", tt.in)
			assert.Equal(t, tt.changed, changed, "disableModify(%q) changed", tt.in)
		})
	}
}

// hostParams is a host procfs holding params with content.
func hostParams(t *testing.T, content string) string {
	t.Helper()
	return testutil.Tree(t, "file driver/nvidia/params "+strconv.Quote(content)+"\n")
}

const (
	paramsOn  = "ResmanDebugLevel: 4294967295\nModifyDeviceFiles: 1\nDeviceFileMode: 438\n"
	paramsOff = "ResmanDebugLevel: 4294967295\nModifyDeviceFiles: 0\nDeviceFileMode: 438\n"
)

// ctrWithParams starts a test container whose rootfs holds the driver's
// procfs files (as the driver's /proc/driver/nvidia would be in the
// container's procfs): params saying ModifyDeviceFiles: 1 and a gpus dir.
func ctrWithParams(t *testing.T) *container.Container {
	t.Helper()
	return container.Start(t, &container.Options{Spec: "file proc/driver/nvidia/params " + strconv.Quote(paramsOn) +
		"\ndir proc/driver/nvidia/gpus/0000:07:00.0\n"})
}

// TestMaskParams runs the hook in a test container's mount namespace with
// each way of making the copy's mount: the container then reads
// ModifyDeviceFiles: 0 (the rest verbatim) from a read-only, nosuid,
// nodev, noexec tmpfs mounted on params alone, the rest of
// /proc/driver/nvidia is untouched, and the host's view of the rootfs is
// unchanged.
func TestMaskParams(t *testing.T) {
	proc := hostParams(t, paramsOn)
	for _, how := range []string{"auto", "detached", "via-parent"} {
		t.Run(how, func(t *testing.T) {
			c := ctrWithParams(t)
			if how == "detached" {
				testutil.RequireKernel(t, "open_tree of a file in a detached tmpfs (older kernels refuse it: EINVAL)", detachedCloneErr())
			}
			code, stderr := hookIn(t, c, how, nil, proc)
			require.Equal(t, 0, code, "exit status: %s", stderr)
			assert.Contains(t, stderr, `masked=true skipped=""`, "the result")
			b, err := os.ReadFile(c.Path(ParamsPath))
			if assert.NoError(t, err, "the container reads params") {
				assert.Equal(t, paramsOff, string(b), "the container reads params")
			}
			m := c.MountAt(t, ParamsPath)
			require.NotNil(t, m, "mount on params, want a tmpfs")
			require.Equal(t, "tmpfs", m.FSType, "mount on params: %+v, want a tmpfs", m)
			for _, opt := range []string{"ro", "nosuid", "nodev", "noexec"} {
				assert.Contains(t, strings.Split(m.Options, ","), opt, "mount options %q lack %s", m.Options, opt)
			}
			assert.Nil(t, c.MountAt(t, "/proc/driver/nvidia"), "a mount was left on /proc/driver/nvidia")
			_, err = os.Stat(c.Path("/proc/driver/nvidia/gpus/0000:07:00.0"))
			assert.NoError(t, err, "the rest of /proc/driver/nvidia is hidden")
			b, _ = os.ReadFile(filepath.Join(c.HostRootfs, ParamsPath))
			assert.Equal(t, paramsOn, string(b), "the host sees the rootfs file changed")
		})
	}
}

// detachedCloneErr is what cloning a file out of a detached tmpfs, as
// maskDetached does, gives on this kernel: nil where it works.
func detachedCloneErr() error {
	tmpfs, err := newCopyTmpfs(nil)
	if err != nil {
		return err
	}
	defer unix.Close(tmpfs)
	fd, err := cloneFile(tmpfs)
	if err == nil {
		unix.Close(fd)
	}
	return err
}

// TestMaskParamsNothingToDo: no params on the host, params already 0,
// no params in the container, a kernel without fsopen: exit 0 and
// nothing mounted.
func TestMaskParamsNothingToDo(t *testing.T) {
	tests := []struct {
		name, proc, deny string
		noTarget         bool
		log              string
	}{
		{"no params on the host", testutil.Tree(t, "dir driver\n"), "", false, "no driver params on the host"},
		{"already 0", hostParams(t, paramsOff), "", false, "do not say ModifyDeviceFiles: 1"},
		{"no params in the container", hostParams(t, paramsOn), "", true, "the container has no driver params"},
		{"no new mount API", hostParams(t, paramsOn), "fsopen", false, "lacks the new mount API"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := ctrWithParams(t)
			if tt.noTarget {
				require.NoError(t, os.Remove(filepath.Join(c.HostRootfs, ParamsPath)))
			}
			code, stderr := hookIn(t, c, "auto", []string{envDeny + "=" + tt.deny}, tt.proc)
			assert.Equal(t, 0, code, "exit status, stderr %q", stderr)
			assert.Contains(t, stderr, tt.log)
			assert.Contains(t, stderr, "masked=false", "the result")
			assert.Nil(t, c.MountAt(t, ParamsPath), "mounted on params")
		})
	}
}

// TestMaskParamsHostile: a container whose params is a symlink (to a host
// file) or a FIFO, or whose /proc is an absolute symlink, never gets a
// mount outside its root: the leaf is not followed, parents resolve in
// the root.
func TestMaskParamsHostile(t *testing.T) {
	proc := hostParams(t, paramsOn)
	hostFile := filepath.Join(t.TempDir(), "host-file")
	require.NoError(t, os.WriteFile(hostFile, []byte("host\n"), 0o644))
	tests := []struct {
		name, spec string
		code       int
		masked     string // a path in the root that must read paramsOff; "" none
	}{
		{"params is a symlink", "symlink proc/driver/nvidia/params " + hostFile + "\n", 1, ""},
		{"params is a fifo", "fifo proc/driver/nvidia/params\n", 1, ""},
		{"proc is an absolute symlink", "symlink proc /fakeproc\nfile fakeproc/driver/nvidia/params " + strconv.Quote(paramsOn) + "\n", 0, "/fakeproc/driver/nvidia/params"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := container.Start(t, &container.Options{Spec: tt.spec})
			code, stderr := hookIn(t, c, "auto", nil, proc)
			assert.Equal(t, tt.code, code, "exit status: %s", stderr)
			for _, m := range c.MountInfo(t) {
				assert.False(t, m.FSType == "tmpfs" && m.Mountpoint != filepath.Join(c.Rootfs, tt.masked) && strings.HasPrefix(m.Mountpoint, c.Rootfs),
					"unexpected mount %s", m.Mountpoint)
				assert.NotEqual(t, hostFile, m.Mountpoint, "the host file got a mount")
			}
			if tt.masked != "" {
				b, _ := os.ReadFile(c.Path(tt.masked))
				assert.Equal(t, paramsOff, string(b), "%s in the container", tt.masked)
			}
			b, _ := os.ReadFile(hostFile)
			assert.Equal(t, "host\n", string(b), "host file changed")
		})
	}
}

// TestReadHostParamsNotRegular: a host params file that is a FIFO is
// refused with an error naming it, and never opened (os.Open of it
// blocked for ever, waiting for a writer).
func TestReadHostParamsNotRegular(t *testing.T) {
	proc := testutil.Tree(t, "fifo driver/nvidia/params\n")
	p := filepath.Join(proc, "driver/nvidia/params")
	done := make(chan error, 1)
	go func() {
		_, err := readHostParams(proc)
		done <- err
	}()
	select {
	case err := <-done:
		if assert.ErrorContains(t, err, "not a regular file", "readHostParams") {
			assert.Contains(t, err.Error(), p, "readHostParams: want an error naming %s", p)
		}
	case <-time.After(10 * time.Second):
		if fd, err := unix.Open(p, unix.O_WRONLY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0); err == nil {
			unix.Close(fd) // unblock the reader
		}
		require.FailNow(t, "readHostParams blocked on a FIFO")
	}
}
