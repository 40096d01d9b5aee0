package nvcontainer

import (
	"golang.org/x/sys/unix"

	"github.com/go-nvc/nvc/internal/ns"
	"github.com/go-nvc/nvc/internal/rootfs"
)

// confined is the thread Apply changes the container from: started early
// (creating a thread and joining a namespace take a while), it calls its
// prepare function (which only reads), waits for its turn before calling
// its function, and returns without calling it if Apply fails before.
type confined struct {
	turn chan bool // true: call the function; false: return
	done chan confinedResult
	over bool // done has been received
}

type confinedResult struct {
	err   error
	panic any // what Run panicked with
}

// startConfined starts n.Run for prepare, at once, and fn, which runs only
// once run is called; an error of prepare is returned by run instead.
// The thread creates files as owner (actAs); nil: as the caller.
func startConfined(n *ns.Namespace, owner *rootfs.Owner, prepare, fn func() error) *confined {
	c := &confined{turn: make(chan bool, 1), done: make(chan confinedResult, 1)}
	go c.wait(n, owner, prepare, fn)
	return c
}

func (c *confined) wait(n *ns.Namespace, owner *rootfs.Owner, prepare, fn func() error) {
	var r confinedResult
	defer func() {
		if v := recover(); v != nil {
			r.panic = v
		}
		c.done <- r
	}()
	r.err = n.Run(func() error {
		// After unshare(CLONE_FS) the umask is this thread's own: with
		// none, an entry is created with its exact mode in one syscall,
		// so a kill between the creation and a chmod cannot leave a
		// narrower mode behind for a retry to keep.
		unix.Umask(0)
		err := actAs(owner)
		if err == nil {
			err = prepare()
		}
		if !<-c.turn {
			return nil
		}
		if err != nil {
			return err
		}
		return fn()
	})
}

// run calls the function on the confined thread and returns its error,
// or that of entering the namespace; a panic there panics here again.
func (c *confined) run() error {
	c.turn <- true
	r := <-c.done
	c.over = true
	if r.panic != nil {
		panic(r.panic)
	}
	return r.err
}

// stop releases a thread whose function was not run and waits for it to
// be gone; after run it does nothing.
func (c *confined) stop() {
	if c.over {
		return
	}
	c.turn <- false
	<-c.done
	c.over = true
}
