package nvcontainer

import (
	"context"
	"fmt"
	"time"

	"github.com/go-nvc/nvc/devices"
	"github.com/go-nvc/nvc/driver"
	"github.com/go-nvc/nvc/nvcontainer/requirement"
)

// NVMLQueryTimeout bounds the lazy NVML query of a plan whose context has
// no deadline.
const NVMLQueryTimeout = 10 * time.Second

// nvmlFacts is what the lazy query reads: the CUDA version and, by GPU
// UUID, brand and compute capability.
type nvmlFacts struct {
	cuda string
	gpus map[string]requirement.Device
}

// askNVML fills in facts what PlanOptions.NVML knows and facts lacks; a
// query that fails or runs out of time leaves facts as they were and
// says why in UnknownReason. The query runs in its own goroutine: an NVML
// that hangs is left behind (a cgo call cannot be interrupted), and the
// plan fails when the context ends.
func (pl *planner) askNVML(facts requirement.Facts) requirement.Facts {
	ctx := pl.ctx
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, NVMLQueryTimeout)
		defer cancel()
	}
	got, err := queryNVML(ctx, pl.opts.NVML)
	if err != nil {
		facts.UnknownReason = fmt.Sprintf("%s; asking NVML: %v", facts.UnknownReason, err)
		return facts
	}
	if got.cuda != "" && (facts.CUDAVersion == "" || pl.p.Driver.CUDAVersion == "") {
		facts.CUDAVersion, facts.CUDAAtLeast = got.cuda, false
	}
	for i, g := range pl.sel.GPUs {
		n, ok := got.gpus[g.UUID]
		if !ok {
			continue
		}
		if facts.Devices[i].Brand == "" {
			facts.Devices[i].Brand = n.Brand
		}
		if facts.Devices[i].Arch == "" {
			facts.Devices[i].Arch = n.Arch
		}
	}
	return facts
}

// queryNVML reads n's facts, or returns ctx's error when ctx ends first.
func queryNVML(ctx context.Context, n devices.NVMLInterface) (nvmlFacts, error) {
	type result struct {
		f   nvmlFacts
		err error
	}
	ch := make(chan result, 1)
	go func() {
		f, err := readNVML(n)
		ch <- result{f, err}
	}()
	select {
	case r := <-ch:
		return r.f, r.err
	case <-ctx.Done():
		return nvmlFacts{}, ctx.Err()
	}
}

func readNVML(n devices.NVMLInterface) (nvmlFacts, error) {
	if err := n.Init(); err != nil {
		return nvmlFacts{}, fmt.Errorf("initializing NVML: %w", err)
	}
	defer n.Shutdown()
	f := nvmlFacts{gpus: map[string]requirement.Device{}}
	if c, err := n.SystemCUDADriverVersion(); err == nil {
		f.cuda = driver.CUDAVersionFromNVML(c)
	}
	count, err := n.DeviceCount()
	if err != nil {
		return f, fmt.Errorf("counting GPUs: %w", err)
	}
	for i := 0; i < count; i++ {
		d, err := n.DeviceByIndex(i)
		if err != nil {
			return f, fmt.Errorf("getting GPU %d: %w", i, err)
		}
		uuid, err := d.UUID()
		if err != nil {
			return f, fmt.Errorf("getting GPU %d's UUID: %w", i, err)
		}
		var rd requirement.Device
		rd.Brand, _ = d.Brand()
		if major, minor, err := d.CUDAComputeCapability(); err == nil {
			rd.Arch = fmt.Sprintf("%d.%d", major, minor)
		}
		f.gpus[uuid] = rd
	}
	return f, nil
}
