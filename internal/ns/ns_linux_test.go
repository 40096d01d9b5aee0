package ns

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
	require.NoError(t, err)
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
	out, err := c.Exec(t, "mount", "-t", "tmpfs", "tmpfs", c.Rootfs+"/mnt")
	require.NoError(t, err, "mount tmpfs in container: %s", out)
	out, err = c.Exec(t, "touch", c.Rootfs+"/mnt/only-in-container")
	require.NoError(t, err, "touch in container: %s", out)
	n, err := Open(c.NSPath())
	require.NoError(t, err)
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
	require.NotEqual(t, host, mustNSID(t, c.NSPath()), "container shares the host mount namespace")
	var tids tidSet
	require.NoError(t, n.Run(inside(c, &tids)))
	assert.Equal(t, host, mustNSID(t, "/proc/thread-self/ns/mnt"), "caller's thread after Run")
	_, err := os.Stat(c.Rootfs + "/mnt/only-in-container")
	assert.Error(t, err, "container's tmpfs visible to the caller after Run")
	assert.False(t, OnConfinedThread(), "OnConfinedThread() outside Run")
	assert.NoError(t, checkThreads(host, tids.tids))
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
		assert.NoError(t, err)
	}
	assert.Len(t, tids.tids, 64, "distinct threads of 64 calls; a confined thread was reused")
	assert.NoError(t, checkThreads(host, tids.tids))
}

func TestRunCurrentConfinesFilesystemContext(t *testing.T) {
	cwd, err := os.Getwd()
	require.NoError(t, err)
	host := mustNSID(t, "/proc/self/ns/mnt")
	var inNS string
	err = Current().Run(func() error {
		inNS, _ = nsID("/proc/thread-self/ns/mnt")
		unix.Umask(0o077)
		return unix.Chdir("/")
	})
	require.NoError(t, err)
	assert.Equal(t, host, inNS, "Current().Run ran outside the caller's namespace")
	now, _ := os.Getwd()
	assert.Equal(t, cwd, now, "process cwd changed by a confined chdir")
	old := unix.Umask(0o022)
	unix.Umask(old)
	assert.NotEqual(t, 0o077, old, "process umask changed by a confined umask")
}

func TestRunReturnsError(t *testing.T) {
	want := errors.New("step failed")
	assert.Same(t, want, Current().Run(func() error { return want }), "Run()")
}

func TestRunPanicRepanicsOnCaller(t *testing.T) {
	cause := errors.New("boom")
	defer func() {
		v := recover()
		p, ok := v.(*PanicError)
		require.True(t, ok, "recovered %T %v, want *PanicError", v, v)
		assert.Same(t, cause, p.Value, "PanicError.Value")
		assert.ErrorIs(t, p, cause)
		assert.Contains(t, string(p.Stack), "TestRunPanicRepanicsOnCaller", "stack does not name the panicking function")
	}()
	Current().Run(func() error { panic(cause) })
	require.Fail(t, "Run returned after a panic")
}

func TestRunGoexit(t *testing.T) {
	err := Current().Run(func() error {
		runtime.Goexit()
		return nil
	})
	assert.ErrorIs(t, err, ErrGoexit, "Run()")
}

func TestOpenRejectsOtherFiles(t *testing.T) {
	for _, path := range []string{"/proc/self/ns/net", "/proc/self/status"} {
		t.Run(path, func(t *testing.T) {
			n, err := Open(path)
			assert.ErrorIs(t, err, ErrNotMountNamespace, "Open(%q) = %v", path, n)
		})
	}
	_, err := Open("/nonexistent/ns")
	assert.ErrorIs(t, err, os.ErrNotExist, "Open(missing)")
}

func TestFromFileAndOpenPID(t *testing.T) {
	c, _ := startContainer(t)
	f, err := os.Open(c.NSPath())
	require.NoError(t, err)
	n, err := FromFile(f)
	f.Close() // FromFile duplicated it
	require.NoError(t, err)
	defer n.Close()
	var tids tidSet
	assert.NoError(t, n.Run(inside(c, &tids)), "FromFile")
	p, err := OpenPID("", c.PID)
	require.NoError(t, err)
	defer p.Close()
	assert.NoError(t, p.Run(inside(c, &tids)), "OpenPID")
}

func TestRunSetnsFailureSkipsFn(t *testing.T) {
	c, n := startContainer(t)
	_ = c
	// A namespace fd that setns refuses: a mount namespace of a process in
	// another user namespace would do; closing the fd is simpler.
	n.file.Close()
	called := false
	err := n.Run(func() error { called = true; return nil })
	assert.Error(t, err, "Run on a closed namespace")
	assert.False(t, called, "Run on a closed namespace called fn")
	var errno syscall.Errno
	assert.ErrorAs(t, err, &errno, "error does not keep the errno")
}

// TestIsCaller tells the caller's own namespace, opened by path or made by
// Current, from a container's, also on a thread confined to the
// container's namespace (where thread-self is that thread).
func TestIsCaller(t *testing.T) {
	c, n := startContainer(t)
	own, err := OpenPID("", os.Getpid())
	require.NoError(t, err)
	defer own.Close()
	for _, tc := range []struct {
		name string
		n    *Namespace
		want bool
	}{{"current", Current(), true}, {"own, opened", own, true}, {"container's", n, false}} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.n.IsCaller()
			require.NoError(t, err, "IsCaller")
			assert.Equal(t, tc.want, got, "IsCaller")
		})
	}
	same, err := n.SameAs(c.NSPath())
	if assert.NoError(t, err, "SameAs(the container's ns file)") {
		assert.True(t, same, "SameAs(the container's ns file)")
	}
	_, err = Current().SameAs(c.NSPath())
	assert.Error(t, err, "Current().SameAs: no error")
	err = n.Run(func() error {
		if got, err := n.IsCaller(); !got || err != nil {
			return fmt.Errorf("inside the container, IsCaller(container's) = %v, %v; want true", got, err)
		}
		if got, err := own.IsCaller(); got || err != nil {
			return fmt.Errorf("inside the container, IsCaller(host's) = %v, %v; want false", got, err)
		}
		return nil
	})
	assert.NoError(t, err)
}
