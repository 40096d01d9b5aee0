package devices_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-nvc/nvc/devices"
)

// hangingNVML blocks in Init until release is closed, as an NVML does on a
// wedged GPU.
type hangingNVML struct {
	devices.NVMLInterface
	release chan struct{}
}

func (h *hangingNVML) Init() error {
	<-h.release
	return h.NVMLInterface.Init()
}

// A hung NVML does not hang Discover past its context: the NVML backend
// fails with ErrNVMLUnavailable and the context's error, Auto falls back
// to procfs.
func TestDiscoverContextHungNVML(t *testing.T) {
	h := genHost(t, nil)
	for _, b := range []devices.Backend{devices.NVML, devices.Auto} {
		t.Run(string(b), func(t *testing.T) {
			hung := &hangingNVML{NVMLInterface: h.NVML, release: make(chan struct{})}
			defer close(hung.release)
			o := optionsFor(h, b)
			o.NVML = hung
			ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
			defer cancel()
			start := time.Now()
			d, err := devices.Discover(ctx, o)
			took := time.Since(start)
			require.LessOrEqual(t, took, 10*time.Second, "Discover took %v past a 100ms context", took)
			switch b {
			case devices.NVML:
				assert.ErrorIs(t, err, devices.ErrNVMLUnavailable, "NVML backend")
				assert.ErrorIs(t, err, context.DeadlineExceeded, "NVML backend")
			case devices.Auto:
				require.NoError(t, err, "Auto backend")
				assert.Equal(t, devices.Procfs, d.Backend, "Auto backend")
				assert.Len(t, d.GPUs, 8, "Auto backend GPUs")
			}
		})
	}
}
