package undo

import (
	"errors"
	"sync"
)

// step is one recorded change: undo takes it back, release (optional) frees
// what undo would have needed.
type step struct {
	undo      func() error
	release   func()
	releaseFd func() int // AddStepFd's release
}

// Stack is an ordered record of changes. The zero value is an empty stack
// ready to use. It is safe for concurrent use: steps recorded from several
// goroutines are taken back in the reverse of the order they were
// recorded in.
type Stack struct {
	mu    sync.Mutex
	steps []step
}

// Add records a change that undo takes back.
func (s *Stack) Add(undo func() error) {
	s.AddStep(undo, nil)
}

// AddStep records a change that undo takes back; release, if not nil, runs
// instead of undo when the step is released (it frees what undo would have
// used, such as open file descriptors). Undo must free them itself.
func (s *Stack) AddStep(undo func() error, release func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.steps = append(s.steps, step{undo: undo, release: release})
}

// AddStepFd is AddStep for a step whose release ends by closing a
// descriptor: release frees the rest and returns that descriptor, which
// it no longer owns (a bare number that no *os.File holds), or -1 when it
// has none left to close. Discard closes the descriptors of all such steps
// together ([CloseFds]), in fewer system calls than a close each.
func (s *Stack) AddStepFd(undo func() error, release func() int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.steps = append(s.steps, step{undo: undo, releaseFd: release})
}

// Len reports how many steps are recorded.
func (s *Stack) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.steps)
}

// Undo takes back every recorded step, the last one first, and empties the
// stack. It runs every step even when some fail and returns their errors
// joined (nil if all succeeded).
func (s *Stack) Undo() error {
	steps := s.take()
	var errs []error
	for i := len(steps) - 1; i >= 0; i-- {
		if err := steps[i].undo(); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Release hands the recorded steps to a new Stack and empties s, so that a
// deferred s.Undo does nothing. The caller may keep the returned stack to
// take the whole operation back later, or call its Discard.
func (s *Stack) Release() *Stack {
	return &Stack{steps: s.take()}
}

// Discard forgets every recorded step, running their release functions
// (the last one first), then closing the descriptors the AddStepFd steps
// handed back; nothing is taken back.
func (s *Stack) Discard() {
	steps := s.take()
	var fds []int
	for i := len(steps) - 1; i >= 0; i-- {
		switch st := steps[i]; {
		case st.releaseFd != nil:
			if fd := st.releaseFd(); fd >= 0 {
				fds = append(fds, fd)
			}
		case st.release != nil:
			st.release()
		}
	}
	CloseFds(fds)
}

// Push records all of other's steps on top of s, in their order, and
// empties other.
func (s *Stack) Push(other *Stack) {
	steps := other.take()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.steps = append(s.steps, steps...)
}

func (s *Stack) take() []step {
	s.mu.Lock()
	defer s.mu.Unlock()
	steps := s.steps
	s.steps = nil
	return steps
}
