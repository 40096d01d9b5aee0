package ns

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// BenchmarkRun measures one round trip: a confined thread is created,
// enters the namespace, runs an empty function and is discarded.
func BenchmarkRun(b *testing.B) {
	noop := func() error { return nil }
	b.Run("current", func(b *testing.B) {
		n := Current()
		for b.Loop() {
			require.NoError(b, n.Run(noop))
		}
	})
	b.Run("container", func(b *testing.B) {
		_, n := startContainer(b)
		for b.Loop() {
			require.NoError(b, n.Run(noop))
		}
	})
	b.Run("plain-goroutine", func(b *testing.B) {
		// The baseline Run is compared against: a goroutine round trip
		// on a reused thread.
		for b.Loop() {
			done := make(chan error, 1)
			go func() { done <- noop() }()
			require.NoError(b, <-done)
		}
	})
}
