package undo

import (
	"errors"
	"reflect"
	"sync"
	"testing"
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
	if want := []string{"d", "c", "b", "a"}; !reflect.DeepEqual(log, want) {
		t.Errorf("undo order = %q, want %q", log, want)
	}
	if !errors.Is(err, errB) || !errors.Is(err, errD) {
		t.Errorf("Undo() = %v, want both step errors", err)
	}
	if s.Len() != 0 {
		t.Errorf("Len after Undo = %d, want 0", s.Len())
	}
	log = nil
	if err := s.Undo(); err != nil || len(log) != 0 {
		t.Errorf("second Undo ran %q, err %v; want nothing", log, err)
	}
}

func TestReleaseMakesDeferredUndoNoop(t *testing.T) {
	var log []string
	var kept *Stack
	func() {
		var s Stack
		defer func() {
			if err := s.Undo(); err != nil {
				t.Error(err)
			}
		}()
		s.Add(record(&log, "a", nil))
		s.Add(record(&log, "b", nil))
		kept = s.Release()
	}()
	if len(log) != 0 {
		t.Fatalf("released steps ran on deferred Undo: %q", log)
	}
	if kept.Len() != 2 {
		t.Fatalf("kept.Len() = %d, want 2", kept.Len())
	}
	if err := kept.Undo(); err != nil {
		t.Fatal(err)
	}
	if want := []string{"b", "a"}; !reflect.DeepEqual(log, want) {
		t.Errorf("kept undo order = %q, want %q", log, want)
	}
}

func TestDiscardRunsReleasesOnly(t *testing.T) {
	var log []string
	var s Stack
	s.AddStep(record(&log, "a", nil), func() { log = append(log, "release a") })
	s.Add(record(&log, "b", nil))
	s.AddStep(record(&log, "c", nil), func() { log = append(log, "release c") })
	s.Discard()
	if want := []string{"release c", "release a"}; !reflect.DeepEqual(log, want) {
		t.Errorf("Discard ran %q, want %q", log, want)
	}
	if s.Len() != 0 {
		t.Errorf("Len after Discard = %d", s.Len())
	}
}

func TestPushKeepsOrder(t *testing.T) {
	var log []string
	var outer, inner Stack
	outer.Add(record(&log, "outer1", nil))
	inner.Add(record(&log, "inner1", nil))
	inner.Add(record(&log, "inner2", nil))
	outer.Push(&inner)
	outer.Add(record(&log, "outer2", nil))
	if inner.Len() != 0 {
		t.Errorf("inner.Len() after Push = %d, want 0", inner.Len())
	}
	if err := outer.Undo(); err != nil {
		t.Fatal(err)
	}
	want := []string{"outer2", "inner2", "inner1", "outer1"}
	if !reflect.DeepEqual(log, want) {
		t.Errorf("undo order = %q, want %q", log, want)
	}
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
	if err := s.Undo(); err != nil {
		t.Fatal(err)
	}
	for g := range 8 {
		got := undone[g]
		if len(got) != 100 {
			t.Fatalf("goroutine %d: %d of 100 steps undone", g, len(got))
		}
		for k, i := range got {
			if i != 99-k {
				t.Fatalf("goroutine %d: undo order %v, want its steps last first", g, got)
			}
		}
	}
}
