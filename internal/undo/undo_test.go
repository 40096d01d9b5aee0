package undo

import (
	"errors"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func record(log *[]string, name string, err error) func() error {
	return func() error {
		*log = append(*log, name)
		return err
	}
}

func TestUndoReverseOrderAndJoinedErrors(t *testing.T) {
	var log []string
	errB := errors.New("b failed")
	errD := errors.New("d failed")
	var s Stack
	s.Add(record(&log, "a", nil))
	s.Add(record(&log, "b", errB))
	s.AddStep(record(&log, "c", nil), func() { log = append(log, "release c") })
	s.Add(record(&log, "d", errD))

	err := s.Undo()
	assert.Equal(t, []string{"d", "c", "b", "a"}, log, "undo order")
	assert.ErrorIs(t, err, errB, "Undo() wants both step errors")
	assert.ErrorIs(t, err, errD, "Undo() wants both step errors")
	assert.Zero(t, s.Len(), "Len after Undo")
	log = nil
	assert.NoError(t, s.Undo(), "second Undo")
	assert.Empty(t, log, "second Undo ran steps")
}

func TestReleaseMakesDeferredUndoNoop(t *testing.T) {
	var log []string
	var kept *Stack
	func() {
		var s Stack
		defer func() {
			assert.NoError(t, s.Undo())
		}()
		s.Add(record(&log, "a", nil))
		s.Add(record(&log, "b", nil))
		kept = s.Release()
	}()
	require.Empty(t, log, "released steps ran on deferred Undo")
	require.Equal(t, 2, kept.Len(), "kept.Len()")
	require.NoError(t, kept.Undo())
	assert.Equal(t, []string{"b", "a"}, log, "kept undo order")
}

func TestDiscardRunsReleasesOnly(t *testing.T) {
	var log []string
	var s Stack
	s.AddStep(record(&log, "a", nil), func() { log = append(log, "release a") })
	s.Add(record(&log, "b", nil))
	s.AddStep(record(&log, "c", nil), func() { log = append(log, "release c") })
	s.Discard()
	assert.Equal(t, []string{"release c", "release a"}, log, "Discard ran")
	assert.Zero(t, s.Len(), "Len after Discard")
}

func TestPushKeepsOrder(t *testing.T) {
	var log []string
	var outer, inner Stack
	outer.Add(record(&log, "outer1", nil))
	inner.Add(record(&log, "inner1", nil))
	inner.Add(record(&log, "inner2", nil))
	outer.Push(&inner)
	outer.Add(record(&log, "outer2", nil))
	assert.Zero(t, inner.Len(), "inner.Len() after Push")
	require.NoError(t, outer.Undo())
	assert.Equal(t, []string{"outer2", "inner2", "inner1", "outer1"}, log, "undo order")
}

// TestConcurrentRecording: steps recorded from many goroutines are all
// taken back, and each goroutine's own steps in reverse order.
func TestConcurrentRecording(t *testing.T) {
	var s Stack
	var mu sync.Mutex
	undone := map[int][]int{}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 100 {
				s.Add(func() error {
					mu.Lock()
					defer mu.Unlock()
					undone[g] = append(undone[g], i)
					return nil
				})
			}
		})
	}
	wg.Wait()
	require.NoError(t, s.Undo())
	for g := range 8 {
		got := undone[g]
		require.Len(t, got, 100, "goroutine %d: steps undone", g)
		for k, i := range got {
			require.Equal(t, 99-k, i, "goroutine %d: undo order %v, want its steps last first", g, got)
		}
	}
}
