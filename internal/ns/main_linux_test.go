package ns

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/go-nvc/nvc/internal/testutil/container"
)

// The main-thread tests run in a re-exec'd child of the test binary whose
// main goroutine starts locked to the main thread (init below), so the
// scenario controls what runs on the process leader's thread.

const (
	envChild = "NVC_NS_MAIN_CHILD" // scenario name
	envNS    = "NVC_NS_MAIN_NSPATH"
)

func init() {
	if os.Getenv(envChild) != "" {
		runtime.LockOSThread() // init runs on the main thread
	}
}

func TestMain(m *testing.M) {
	if scenario := os.Getenv(envChild); scenario != "" {
		os.Exit(runChild(scenario, os.Getenv(envNS)))
	}
	os.Exit(m.Run())
}

// runChild runs a scenario and prints "ok handoffs=N" or the failure.
func runChild(scenario, nsPath string) int {
	host, _ := nsID("/proc/self/ns/mnt")
	var tids tidSet
	err := childScenario(scenario, nsPath, &tids)
	if err == nil {
		err = checkThreads(host, tids.tids)
	}
	if err != nil {
		fmt.Println("fail:", err)
		return 1
	}
	fmt.Printf("ok handoffs=%d\n", mainThreadHandoffs.Load())
	return 0
}

func childScenario(scenario, nsPath string, tids *tidSet) error {
	enter := func() error {
		tids.add(unix.Gettid())
		return nil
	}
	switch scenario {
	case "locked-caller":
		// The caller is the main goroutine, locked to the main thread.
		n, err := Open(nsPath)
		if err != nil {
			return err
		}
		if unix.Gettid() != unix.Getpid() {
			return fmt.Errorf("child main goroutine not on the main thread")
		}
		for range 16 {
			if err := n.Run(enter); err != nil {
				return err
			}
		}
		return nil
	case "free-main", "unguarded":
		return freeMain(scenario, nsPath, enter)
	}
	return fmt.Errorf("unknown scenario %q", scenario)
}

// freeMain leaves the main thread idle (one P, main goroutine blocked) so
// the confining goroutine is scheduled onto it.
func freeMain(scenario, nsPath string, enter func() error) error {
	runtime.GOMAXPROCS(1)
	n, err := Open(nsPath)
	if err != nil {
		return err
	}
	runtime.UnlockOSThread()
	done := make(chan error)
	go func() {
		for range 16 {
			if err := runVariant(scenario, n, enter); err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	return <-done
}

// runVariant is Run, or for "unguarded" the naive pattern without the
// main-thread guard (the negative control: the check must catch it).
func runVariant(scenario string, n *Namespace, fn func() error) error {
	if scenario != "unguarded" {
		return n.Run(fn)
	}
	done := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		if err := n.enter(); err != nil {
			done <- err
			return
		}
		done <- fn()
	}()
	return <-done
}

func runMainChild(t *testing.T, scenario string) string {
	t.Helper()
	c := container.Start(t, nil)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), envChild+"="+scenario, envNS+"="+c.NSPath())
	out, _ := cmd.CombinedOutput()
	return strings.TrimSpace(string(out))
}

func TestRunFromLockedMainThread(t *testing.T) {
	out := runMainChild(t, "locked-caller")
	require.True(t, strings.HasPrefix(out, "ok"), "child: %s", out)
}

func TestRunGuardsIdleMainThread(t *testing.T) {
	out := runMainChild(t, "free-main")
	require.True(t, strings.HasPrefix(out, "ok"), "child: %s", out)
	assert.NotEqual(t, "ok handoffs=0", out, "the confining goroutine never landed on the main thread, so the guard went untested")
	t.Log("child:", out)
}

// TestUnguardedPatternLeaksIntoLeader shows that the thread check above can
// fail: without the guard the leader ends in the container's namespace.
func TestUnguardedPatternLeaksIntoLeader(t *testing.T) {
	out := runMainChild(t, "unguarded")
	require.Contains(t, out, "process leader in mount namespace", "want the leader caught in the container's namespace")
}
