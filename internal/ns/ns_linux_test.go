package ns

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/go-nvc/nvc/internal/testutil/container"
)

// nsID is the "mnt:[inode]" name of the mount namespace file at path.
func nsID(path string) (string, error) {
	return os.Readlink(path)
}

func mustNSID(t testing.TB, path string) string {
	t.Helper()
	id, err := nsID(path)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// threadNS is, for each thread of this process, its mount namespace.
func threadNS() (map[int]string, error) {
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return nil, err
	}
	out := map[int]string{}
	for _, task := range tasks {
		tid, _ := strconv.Atoi(task.Name())
		id, err := nsID(filepath.Join("/proc/self/task", task.Name(), "ns/mnt"))
		if errors.Is(err, os.ErrNotExist) {
			continue // exited meanwhile
		}
		if err != nil {
			return nil, err
		}
		out[tid] = id
	}
	return out, nil
}

// checkThreads verifies that the leader and every thread is in want,
// except confined threads, which must disappear (Go discards them).
func checkThreads(want string, confined map[int]bool) error {
	deadline := time.Now().Add(10 * time.Second)
	for {
		lingering, err := foreignThreads(want, confined)
		if err != nil || len(lingering) == 0 {
			return err
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("confined threads %v still alive: reused by the scheduler?", lingering)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func foreignThreads(want string, confined map[int]bool) ([]int, error) {
	if leader, err := nsID("/proc/self/ns/mnt"); err != nil || leader != want {
		return nil, fmt.Errorf("process leader in mount namespace %s, want %s (%v)", leader, want, err)
	}
	threads, err := threadNS()
	if err != nil {
		return nil, err
	}
	var lingering []int
	for tid, id := range threads {
		switch {
		case id == want:
		case confined[tid]:
			lingering = append(lingering, tid)
		default:
			return nil, fmt.Errorf("thread %d (not a confined one) in mount namespace %s, want %s", tid, id, want)
		}
	}
	return lingering, nil
}

type tidSet struct {
	mu   sync.Mutex
	tids map[int]bool
}

func (s *tidSet) add(tid int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.tids == nil {
		s.tids = map[int]bool{}
	}
	s.tids[tid] = true
}

func startContainer(t testing.TB) (*container.Container, *Namespace) {
	t.Helper()
	c := container.Start(t, &container.Options{Spec: "dir mnt"})
	if out, err := c.Exec(t, "mount", "-t", "tmpfs", "tmpfs", c.Rootfs+"/mnt"); err != nil {
		t.Fatalf("mount tmpfs in container: %v: %s", err, out)
	}
	if out, err := c.Exec(t, "touch", c.Rootfs+"/mnt/only-in-container"); err != nil {
		t.Fatalf("touch in container: %v: %s", err, out)
	}
	n, err := Open(c.NSPath())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.Close() })
	return c, n
}

// inside checks, on the confined thread, that it is in ctr's namespace.
func inside(c *container.Container, tids *tidSet) func() error {
	want, wantErr := nsID(c.NSPath())
	return func() error {
		if wantErr != nil {
			return wantErr
		}
		tids.add(unix.Gettid())
		got, err := nsID("/proc/thread-self/ns/mnt")
		if err != nil || got != want {
			return fmt.Errorf("confined thread in %s, want %s (%v)", got, want, err)
		}
		if _, err := os.Stat(c.Rootfs + "/mnt/only-in-container"); err != nil {
			return fmt.Errorf("container's tmpfs not visible: %w", err)
		}
		if !OnConfinedThread() {
			return errors.New("OnConfinedThread() = false inside Run")
		}
		return nil
	}
}

func TestRunEntersNamespace(t *testing.T) {
	c, n := startContainer(t)
	host := mustNSID(t, "/proc/self/ns/mnt")
	if host == mustNSID(t, c.NSPath()) {
		t.Fatal("container shares the host mount namespace")
	}
	var tids tidSet
	if err := n.Run(inside(c, &tids)); err != nil {
		t.Fatal(err)
	}
	if got := mustNSID(t, "/proc/thread-self/ns/mnt"); got != host {
		t.Errorf("caller's thread in %s after Run, want %s", got, host)
	}
	if _, err := os.Stat(c.Rootfs + "/mnt/only-in-container"); err == nil {
		t.Error("container's tmpfs visible to the caller after Run")
	}
	if OnConfinedThread() {
		t.Error("OnConfinedThread() = true outside Run")
	}
	if err := checkThreads(host, tids.tids); err != nil {
		t.Error(err)
	}
}

func TestRunConcurrent(t *testing.T) {
	c, n := startContainer(t)
	host := mustNSID(t, "/proc/self/ns/mnt")
	var tids tidSet
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for range 64 {
		wg.Go(func() { errs <- n.Run(inside(c, &tids)) })
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	if len(tids.tids) != 64 {
		t.Errorf("64 calls ran on %d distinct threads; a confined thread was reused", len(tids.tids))
	}
	if err := checkThreads(host, tids.tids); err != nil {
		t.Error(err)
	}
}

func TestRunCurrentConfinesFilesystemContext(t *testing.T) {
	cwd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	host := mustNSID(t, "/proc/self/ns/mnt")
	var inNS string
	err = Current().Run(func() error {
		inNS, _ = nsID("/proc/thread-self/ns/mnt")
		unix.Umask(0o077)
		return unix.Chdir("/")
	})
	if err != nil {
		t.Fatal(err)
	}
	if inNS != host {
		t.Errorf("Current().Run ran in %s, want the caller's %s", inNS, host)
	}
	if now, _ := os.Getwd(); now != cwd {
		t.Errorf("process cwd changed to %q by a confined chdir", now)
	}
	old := unix.Umask(0o022)
	unix.Umask(old)
	if old == 0o077 {
		t.Error("process umask changed by a confined umask")
	}
}

func TestRunReturnsError(t *testing.T) {
	want := errors.New("step failed")
	if err := Current().Run(func() error { return want }); err != want {
		t.Errorf("Run() = %v, want %v", err, want)
	}
}

func TestRunPanicRepanicsOnCaller(t *testing.T) {
	cause := errors.New("boom")
	defer func() {
		v := recover()
		p, ok := v.(*PanicError)
		if !ok {
			t.Fatalf("recovered %T %v, want *PanicError", v, v)
		}
		if p.Value != cause || !errors.Is(p, cause) {
			t.Errorf("PanicError.Value = %v, want %v", p.Value, cause)
		}
		if !strings.Contains(string(p.Stack), "TestRunPanicRepanicsOnCaller") {
			t.Errorf("stack does not name the panicking function:\n%s", p.Stack)
		}
	}()
	Current().Run(func() error { panic(cause) })
	t.Fatal("Run returned after a panic")
}

func TestRunGoexit(t *testing.T) {
	err := Current().Run(func() error {
		runtime.Goexit()
		return nil
	})
	if !errors.Is(err, ErrGoexit) {
		t.Errorf("Run() = %v, want ErrGoexit", err)
	}
}

func TestOpenRejectsOtherFiles(t *testing.T) {
	for _, path := range []string{"/proc/self/ns/net", "/proc/self/status"} {
		n, err := Open(path)
		if !errors.Is(err, ErrNotMountNamespace) {
			t.Errorf("Open(%q) = %v, %v; want ErrNotMountNamespace", path, n, err)
		}
	}
	if _, err := Open("/nonexistent/ns"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Open(missing) = %v, want ErrNotExist", err)
	}
}

func TestFromFileAndOpenPID(t *testing.T) {
	c, _ := startContainer(t)
	f, err := os.Open(c.NSPath())
	if err != nil {
		t.Fatal(err)
	}
	n, err := FromFile(f)
	f.Close() // FromFile duplicated it
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	var tids tidSet
	if err := n.Run(inside(c, &tids)); err != nil {
		t.Errorf("FromFile: %v", err)
	}
	p, err := OpenPID("", c.PID)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if err := p.Run(inside(c, &tids)); err != nil {
		t.Errorf("OpenPID: %v", err)
	}
}

func TestRunSetnsFailureSkipsFn(t *testing.T) {
	c, n := startContainer(t)
	_ = c
	// A namespace fd that setns refuses: a mount namespace of a process in
	// another user namespace would do; closing the fd is simpler.
	n.file.Close()
	called := false
	err := n.Run(func() error { called = true; return nil })
	if err == nil || called {
		t.Errorf("Run on a closed namespace = %v, fn called %v; want an error and no call", err, called)
	}
	var errno syscall.Errno
	if !errors.As(err, &errno) {
		t.Errorf("error %v does not keep the errno", err)
	}
}

// TestIsCaller tells the caller's own namespace, opened by path or made by
// Current, from a container's, also on a thread confined to the
// container's namespace (where thread-self is that thread).
func TestIsCaller(t *testing.T) {
	c, n := startContainer(t)
	own, err := OpenPID("", os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	defer own.Close()
	for _, tc := range []struct {
		name string
		n    *Namespace
		want bool
	}{{"current", Current(), true}, {"own, opened", own, true}, {"container's", n, false}} {
		if got, err := tc.n.IsCaller(); got != tc.want || err != nil {
			t.Errorf("%s: IsCaller = %v, %v; want %v", tc.name, got, err, tc.want)
		}
	}
	if same, err := n.SameAs(c.NSPath()); !same || err != nil {
		t.Errorf("SameAs(the container's ns file) = %v, %v; want true", same, err)
	}
	if _, err := Current().SameAs(c.NSPath()); err == nil {
		t.Error("Current().SameAs: no error")
	}
	err = n.Run(func() error {
		if got, err := n.IsCaller(); !got || err != nil {
			return fmt.Errorf("inside the container, IsCaller(container's) = %v, %v; want true", got, err)
		}
		if got, err := own.IsCaller(); got || err != nil {
			return fmt.Errorf("inside the container, IsCaller(host's) = %v, %v; want false", got, err)
		}
		return nil
	})
	if err != nil {
		t.Error(err)
	}
}
