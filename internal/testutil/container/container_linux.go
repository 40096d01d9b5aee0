package container

import (
	"bufio"
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/moby/sys/mountinfo"

	"github.com/go-nvc/nvc/internal/testutil"
)

// Busybox is the static busybox the container runs.
const Busybox = "/bin/busybox"

// InnerBusybox is where a pivoted container finds busybox, relative to its
// rootfs.
const InnerBusybox = ".testutil/busybox"

// Options describe the container to start; nil means all defaults.
type Options struct {
	// Spec is an internal/fstree description built in the rootfs before the
	// container starts; "" builds nothing.
	Spec string
	// Rootfs is an existing directory to use as the rootfs; "" makes a new
	// temp dir.
	Rootfs string
	// PivotRoot makes the rootfs the container's root; false leaves the
	// namespace as a runtime's hooks see it (host paths visible, rootfs at
	// its host path).
	PivotRoot bool
	// MountProc mounts a fresh procfs (of the new PID namespace) at
	// <rootfs>/proc; false mounts nothing there.
	MountProc bool
	// UID and GID are the credentials the container process runs as once
	// set up; zero means root. /proc/PID is owned by them.
	UID, GID int
}

// Container is a running test container.
type Container struct {
	// PID is the container process's PID in the host PID namespace.
	PID int
	// Rootfs is the rootfs path inside the container's mount namespace:
	// the host path before pivot_root, "/" after.
	Rootfs string
	// HostRootfs is the rootfs directory seen from the host.
	HostRootfs string

	cmd    *exec.Cmd
	done   <-chan struct{} // closed once cmd is reaped
	stdin  io.WriteCloser
	stderr *bytes.Buffer
}

// Start starts a container and stops it when tb ends.
func Start(tb testing.TB, opts *Options) *Container {
	tb.Helper()
	testutil.RequireRoot(tb)
	if opts == nil {
		opts = &Options{}
	}
	if _, err := os.Stat(Busybox); err != nil {
		testutil.Unavailable(tb, "needs a static busybox at %s: %v", Busybox, err)
	}
	c := &Container{HostRootfs: hostRootfs(tb, opts), Rootfs: "/"}
	if !opts.PivotRoot {
		c.Rootfs = c.HostRootfs
	}
	c.start(tb, opts)
	return c
}

func hostRootfs(tb testing.TB, opts *Options) string {
	tb.Helper()
	dir := opts.Rootfs
	if dir == "" {
		dir = tb.TempDir()
	}
	if opts.Spec != "" {
		testutil.BuildTree(tb, dir, opts.Spec)
	}
	if opts.PivotRoot {
		copyBusybox(tb, dir)
	}
	return dir
}

func copyBusybox(tb testing.TB, rootfs string) {
	tb.Helper()
	testutil.CopyHostFile(tb, Busybox, filepath.Join(rootfs, InnerBusybox), 0o755)
}

// setupScript prepares the container's namespace; it runs there through
// nsenter, as root, while the container process waits.
const setupScript = `set -e
bb=` + Busybox + `
$bb mount --bind "$ROOTFS" "$ROOTFS"
if [ -n "$PROC" ]; then $bb mkdir -p "$ROOTFS/proc"; $bb mount -t proc proc "$ROOTFS/proc"; fi
if [ -n "$PIVOT" ]; then
	cd "$ROOTFS"
	$bb mkdir .oldroot
	$bb pivot_root . .oldroot
	bb=/` + InnerBusybox + `
	cd /
	$bb umount -l /.oldroot
	$bb rmdir /.oldroot
fi
`

// waitScript is the container process: it says "ready" and waits for
// stdin EOF.
const waitScript = `echo ready; read x || true`

func (c *Container) start(tb testing.TB, opts *Options) {
	tb.Helper()
	nsenter := testutil.RequireCommand(tb, "nsenter")
	cmd := waitCommand(opts)
	c.stderr = &bytes.Buffer{}
	cmd.Stderr = c.stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		tb.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		tb.Fatal(err)
	}
	if c.done, err = startPinned(cmd); err != nil {
		tb.Fatalf("starting test container: %v", err)
	}
	c.cmd, c.PID, c.stdin = cmd, cmd.Process.Pid, stdin
	tb.Cleanup(c.stop)
	c.awaitReady(tb, stdout)
	c.setup(tb, nsenter, opts)
}

// waitCommand is the container process, in new mount and PID namespaces.
func waitCommand(opts *Options) *exec.Cmd {
	cmd := exec.Command(Busybox, "sh", "-c", waitScript)
	cmd.Dir = "/"
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Cloneflags:   syscall.CLONE_NEWPID,
		Unshareflags: syscall.CLONE_NEWNS, // Go also makes / rprivate
		Pdeathsig:    syscall.SIGKILL,
		Credential:   &syscall.Credential{Uid: uint32(opts.UID), Gid: uint32(opts.GID)},
	}
	return cmd
}

// startPinned starts cmd from a goroutine locked to its thread until cmd
// has exited and been reaped: Pdeathsig fires when the *thread* that
// started the child exits, and code under test (ns.Run) makes the Go
// runtime discard threads.
// The returned channel is closed once cmd has been reaped.
func startPinned(cmd *exec.Cmd) (<-chan struct{}, error) {
	started := make(chan error)
	done := make(chan struct{})
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		err := cmd.Start()
		started <- err
		if err == nil {
			cmd.Wait()
			close(done)
		}
	}()
	return done, <-started
}

func (c *Container) setup(tb testing.TB, nsenter string, opts *Options) {
	tb.Helper()
	setup := exec.Command(nsenter, "-t", strconv.Itoa(c.PID), "-m", "-p", Busybox, "sh", "-c", setupScript)
	setup.Env = scriptEnv(c.HostRootfs, opts)
	if out, err := setup.CombinedOutput(); err != nil {
		tb.Fatalf("setting up test container: %v: %s", err, out)
	}
}

func scriptEnv(rootfs string, opts *Options) []string {
	env := []string{
		"PATH=/usr/bin:/bin",
		"ROOTFS=" + rootfs,
	}
	if opts.PivotRoot {
		env = append(env, "PIVOT=1")
	}
	if opts.MountProc {
		env = append(env, "PROC=1")
	}
	return env
}

func (c *Container) awaitReady(tb testing.TB, stdout io.Reader) {
	tb.Helper()
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if strings.TrimSpace(line) != "ready" {
		c.stop()
		tb.Fatalf("test container did not start: %q, %v; stderr: %s", line, err, c.stderr)
	}
}

// stop ends the container: stdin EOF, then SIGKILL after a grace period.
func (c *Container) stop() {
	if c.cmd == nil {
		return
	}
	c.stdin.Close()
	if !c.exited(5 * time.Second) {
		c.cmd.Process.Kill()
		c.exited(time.Minute)
	}
}

// exited waits up to d for the pinned goroutine to reap the container.
func (c *Container) exited(d time.Duration) bool {
	select {
	case <-c.done:
		return true
	case <-time.After(d):
		return false
	}
}

// NSPath is the container's mount namespace file in the host's procfs.
func (c *Container) NSPath() string {
	return "/proc/" + strconv.Itoa(c.PID) + "/ns/mnt"
}

// Path is a host path through which p (a path inside the rootfs) is seen
// as the container sees it, mounts included.
func (c *Container) Path(p string) string {
	return filepath.Join("/proc", strconv.Itoa(c.PID), "root", c.Rootfs, p)
}

// MountInfo parses the container's /proc/PID/mountinfo.
func (c *Container) MountInfo(tb testing.TB) []*mountinfo.Info {
	tb.Helper()
	mounts, err := mountinfo.PidMountInfo(c.PID)
	if err != nil {
		tb.Fatalf("reading test container mountinfo: %v", err)
	}
	return mounts
}

// MountAt returns the container's topmost mount whose mountpoint is p, a
// path inside the rootfs; nil when nothing is mounted there.
func (c *Container) MountAt(tb testing.TB, p string) *mountinfo.Info {
	tb.Helper()
	want := filepath.Join(c.Rootfs, p)
	var top *mountinfo.Info
	for _, m := range c.MountInfo(tb) {
		if m.Mountpoint == want {
			top = m // mountinfo lists a stack bottom first
		}
	}
	return top
}

// Exec runs a busybox applet inside the container's mount and PID
// namespaces, rooted at its root, and returns its combined output.
func (c *Container) Exec(tb testing.TB, args ...string) (string, error) {
	tb.Helper()
	nsenter := testutil.RequireCommand(tb, "nsenter")
	bb := Busybox
	if c.Rootfs == "/" {
		bb = "/" + InnerBusybox
	}
	argv := append([]string{"-t", strconv.Itoa(c.PID), "-m", "-p", "-r", "-w", bb}, args...)
	out, err := exec.Command(nsenter, argv...).CombinedOutput()
	return string(out), err
}
