package devices_test

import (
	"context"
	"errors"
	"testing"
	"time"

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
			if took := time.Since(start); took > 10*time.Second {
				t.Fatalf("Discover took %v past a 100ms context", took)
			}
			switch b {
			case devices.NVML:
				if !errors.Is(err, devices.ErrNVMLUnavailable) || !errors.Is(err, context.DeadlineExceeded) {
					t.Errorf("NVML backend: %v; want ErrNVMLUnavailable and the deadline", err)
				}
			case devices.Auto:
				if err != nil || d.Backend != devices.Procfs || len(d.GPUs) != 8 {
					t.Errorf("Auto backend: %v, %+v; want procfs with 8 GPUs", err, d)
				}
			}
		})
	}
}
