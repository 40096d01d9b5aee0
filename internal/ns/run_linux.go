package ns

import (
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"

	"github.com/go-nvc/nvc/internal/sentinel"
)

// result carries a confined call's outcome back to Run's caller.
type result struct {
	err   error
	panic *PanicError
}

// confined holds the thread ids that are running a function for Run.
var confined sync.Map

// mainThreadHandoffs counts how often the main-thread guard fired (tests).
var mainThreadHandoffs atomic.Int64

// Run calls fn on a new OS thread confined to n and returns fn's error.
//
// The thread has unshared its filesystem context and, unless n is
// [Current], joined n with setns; it is never given back to the Go
// scheduler, so nothing else ever runs there. If fn panics, Run panics on
// the caller's goroutine with a *[PanicError] holding the value and the
// confined stack. If fn calls runtime.Goexit, Run returns [ErrGoexit].
// Errors entering the namespace are returned without calling fn.
//
// Run blocks until fn returns; it is safe for concurrent use.
func (n *Namespace) Run(fn func() error) error {
	done := make(chan result, 1)
	go n.confine(fn, done)
	r := <-done
	if r.panic != nil {
		panic(r.panic)
	}
	return r.err
}

// OnConfinedThread reports whether the calling goroutine is running a
// function for Run (and so may change its thread's working directory).
// It is only meaningful on a goroutine locked to its thread.
func OnConfinedThread() bool {
	_, ok := confined.Load(unix.Gettid())
	return ok
}

// confine locks a thread and runs fn there; it sends exactly one result.
func (n *Namespace) confine(fn func() error, done chan<- result) {
	runtime.LockOSThread()
	if unix.Gettid() == unix.Getpid() {
		// The process leader's thread: hold it so the worker cannot land
		// here, and give it back untouched afterwards.
		mainThreadHandoffs.Add(1)
		inner := make(chan result, 1)
		go n.confine(fn, inner)
		done <- <-inner
		runtime.UnlockOSThread()
		return
	}
	// Never unlocked: the thread dies with this goroutine.
	r := result{err: ErrGoexit} // kept only if fn calls runtime.Goexit
	defer func() { done <- r }()
	r = n.enterAndCall(fn)
}

func (n *Namespace) enterAndCall(fn func() error) result {
	if err := n.enter(); err != nil {
		return result{err: err}
	}
	tid := unix.Gettid()
	confined.Store(tid, struct{}{})
	defer confined.Delete(tid)
	return call(fn)
}

func (n *Namespace) enter() error {
	if err := unix.Unshare(unix.CLONE_FS); err != nil {
		return fmt.Errorf("unsharing filesystem context: %w", os.NewSyscallError("unshare", err))
	}
	if n.file == nil {
		return nil
	}
	if err := unix.Setns(int(n.file.Fd()), unix.CLONE_NEWNS); err != nil {
		return sentinel.Permission(fmt.Sprintf("entering mount namespace %q", n.file.Name()), "CAP_SYS_ADMIN", os.NewSyscallError("setns", err))
	}
	return nil
}

// call runs fn, turning a panic into a result; a Goexit passes through.
func call(fn func() error) (r result) {
	defer func() {
		if v := recover(); v != nil {
			r = result{panic: &PanicError{Value: v, Stack: debug.Stack()}}
		}
	}()
	return result{err: fn()}
}
