// Package undo records the steps of a multi-step change so that a failure
// part-way can take back what was done, in reverse order.
//
// It follows gVisor's cleanup pattern: each step that changes something
// registers how to take the change back; the caller defers [Stack.Undo] and
// calls [Stack.Release] once the whole operation has succeeded, which turns
// the deferred Undo into a no-op.
//
//	var u undo.Stack
//	defer u.Undo()
//	if err := step1(&u); err != nil {
//		return err // step1's change is taken back
//	}
//	kept := u.Release() // success: nothing is taken back
//
// A step may keep resources (open file descriptors) that it needs in order to
// undo safely. Such a step registers a release function too, through
// [Stack.AddStep]: it runs when the step is released instead of undone.
// A release that ends by closing a descriptor is registered with
// [Stack.AddStepFd] instead and hands the descriptor back: Discard closes
// them all together ([CloseFds]: close_range(2) over runs of consecutive
// numbers that are all handed back, never over anyone else's).
//
// The package touches nothing itself; it needs no privilege. A Stack is safe
// for concurrent use; the steps run by Undo and Discard run on the calling
// goroutine, one at a time.
package undo
