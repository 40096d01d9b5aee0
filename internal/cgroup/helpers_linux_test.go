package cgroup

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/moby/sys/mountinfo"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/go-nvc/nvc/internal/testutil"
)

// envOpener makes the test binary act as the opener child (see runOpener).
const envOpener = "NVC_CGROUP_TEST_OPENER"

func TestMain(m *testing.M) {
	if os.Getenv(envOpener) == "1" {
		runOpener(os.Stdin, os.Stdout)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// runOpener opens each path read from in for reading and writing (for
// reading only where the line starts with "r ") and answers "ok" or the
// errno name (EPERM, ENXIO, ...), one line each.
func runOpener(in io.Reader, out io.Writer) {
	sc := bufio.NewScanner(in)
	for sc.Scan() {
		flags := unix.O_RDWR
		path, ro := strings.CutPrefix(sc.Text(), "r ")
		if ro {
			flags = unix.O_RDONLY
		}
		fd, err := unix.Open(path, flags|unix.O_CLOEXEC|unix.O_NOCTTY, 0)
		if err == nil {
			unix.Close(fd)
			fmt.Fprintln(out, "ok")
			continue
		}
		var errno unix.Errno
		if errors.As(err, &errno) {
			fmt.Fprintln(out, unix.ErrnoName(errno))
			continue
		}
		fmt.Fprintln(out, err)
	}
}

// opener is a child process that opens device nodes on request, so that the
// test can place it in a cgroup and see what the kernel lets it open.
type opener struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Reader
}

func startOpener(t *testing.T) *opener {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), envOpener+"=1")
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	require.NoError(t, err)
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	o := &opener{cmd: cmd, in: in, out: bufio.NewReader(out)}
	t.Cleanup(func() {
		in.Close()
		cmd.Process.Kill()
		cmd.Wait()
	})
	return o
}

func (o *opener) pid() int { return o.cmd.Process.Pid }

// open asks the child to open path read-write (read-only when it starts
// with "r ") and returns its answer.
func (o *opener) open(t *testing.T, path string) string {
	t.Helper()
	_, err := fmt.Fprintln(o.in, path)
	require.NoError(t, err, "asking the opener")
	line, err := o.out.ReadString('\n')
	require.NoError(t, err, "reading the opener's answer")
	return strings.TrimSpace(line)
}

// expectOpen checks the child's answer for each node name in want.
func (o *opener) expectOpen(t *testing.T, stage, dir string, want map[string]string) {
	t.Helper()
	for _, name := range sortedKeys(want) {
		assert.Equal(t, want[name], o.open(t, filepath.Join(dir, name)), "%s: opening %s", stage, name)
	}
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// deviceNodes makes char nodes in a temp dir: null 1:3, zero 1:5, random 1:8
// and nvidia0 195:255 (no driver behind major 195 here, so once allowed its
// open fails with ENXIO instead of EPERM).
func deviceNodes(t *testing.T) string {
	t.Helper()
	if b, err := os.ReadFile("/proc/devices"); err == nil && strings.Contains(string(b), "\n195 ") {
		testutil.Unavailable(t, "major 195 has a driver here (%q in /proc/devices); the EPERM/ENXIO test needs none", "195")
	}
	return testutil.RootTree(t, `
char null 1 3 0666
char zero 1 5 0666
char random 1 8 0666
char nvidia0 195 255 0666
`)
}

// cgroupMount returns the mountpoint of the first mount of the caller that
// passes keep, gating t on there being one.
func cgroupMount(t testing.TB, what string, keep func(*mountinfo.Info) bool) string {
	t.Helper()
	mounts, err := mountinfo.GetMounts(nil)
	require.NoError(t, err)
	for _, m := range mounts {
		if keep(m) {
			return m.Mountpoint
		}
	}
	testutil.RequireKernel(t, what, errors.New("no such mount in /proc/self/mountinfo"))
	return ""
}

func v1DevicesMount(t testing.TB) string {
	return cgroupMount(t, "a cgroup v1 devices hierarchy", func(m *mountinfo.Info) bool {
		return servesVersion(m, V1) && m.Root == "/"
	})
}

func v2Mount(t testing.TB) string {
	return cgroupMount(t, "a cgroup2 hierarchy", func(m *mountinfo.Info) bool {
		return servesVersion(m, V2) && m.Root == "/"
	})
}

// newCgroup creates a uniquely named child of parent and removes it when t
// ends (after the processes in it, started later, have been killed).
func newCgroup(t testing.TB, parent string) string {
	t.Helper()
	testutil.RequireRoot(t)
	dir, err := os.MkdirTemp(parent, "nvc-test-")
	if err != nil {
		testutil.RequireKernel(t, "creating a cgroup under "+parent, err)
	}
	t.Cleanup(func() {
		assert.NoError(t, os.Remove(dir), "removing test cgroup")
	})
	return dir
}

// join moves process pid into the cgroup dir.
func join(t *testing.T, dir string, pid int) {
	t.Helper()
	err := os.WriteFile(filepath.Join(dir, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0)
	require.NoError(t, err, "moving pid %d into %s", pid, dir)
}

func writeControl(t testing.TB, dir, name, line string) {
	t.Helper()
	err := os.WriteFile(filepath.Join(dir, name), []byte(line), 0)
	require.NoError(t, err, "writing %q to %s/%s", line, dir, name)
}

func readControl(t *testing.T, dir, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, name))
	require.NoError(t, err)
	return string(b)
}
