package nvcontainer_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-nvc/nvc/devices"
	"github.com/go-nvc/nvc/nvcontainer"
	"github.com/go-nvc/nvc/nvcontainer/requirement"
)

// countingNVML counts Init calls; with block set, Init waits for it to be
// closed (a hung NVML).
type countingNVML struct {
	devices.NVMLInterface
	inits atomic.Int32
	block chan struct{}
}

func (n *countingNVML) Init() error {
	n.inits.Add(1)
	if n.block != nil {
		<-n.block
	}
	return n.NVMLInterface.Init()
}

// TestPlanAsksNVMLLazily: on a procfs host, NVML (PlanOptions.NVML) is
// started only for a requirement that fails on a fact procfs lacks, and
// then decides it: the nvidia/cuda:12.4.1 image on an R535 driver needs
// the brand (its forward compatibility clauses), which NVML gives.
func TestPlanAsksNVMLLazily(t *testing.T) {
	h := procfsHost(t, "535.104.05")
	n := &countingNVML{NVMLInterface: h.fake.NVML}
	opts := &nvcontainer.PlanOptions{NVML: n}
	p, err := nvcontainer.NewPlanContext(context.Background(), h.host, privReq(t, cuda124Env...), nvcontainer.Container{}, opts)
	if err != nil || !slices.Equal(p.Requirements, []string{cuda124Require}) || n.inits.Load() != 1 {
		t.Fatalf("R535 with NVML: %v, NVML started %d times; want a plan, started once", err, n.inits.Load())
	}
	_, err = nvcontainer.NewPlan(h.host, privReq(t, "NVIDIA_VISIBLE_DEVICES=0", "NVIDIA_REQUIRE_ARCH=arch>=9.0"), nvcontainer.Container{}, opts)
	if !errors.Is(err, requirement.ErrUnsatisfied) || errors.Is(err, requirement.ErrUnknownFact) || err.Error() != "requirement error: unsatisfied condition: arch>=9.0" {
		t.Errorf("arch>=9.0 on an A100 with NVML: %v; want refused on the known arch 8.0", err)
	}
	h = procfsHost(t, "550.54.15")
	n = &countingNVML{NVMLInterface: h.fake.NVML}
	if _, err := nvcontainer.NewPlan(h.host, privReq(t, cuda124Env...), nvcontainer.Container{}, &nvcontainer.PlanOptions{NVML: n}); err != nil || n.inits.Load() != 0 {
		t.Errorf("R550: %v, NVML started %d times; want a plan without NVML", err, n.inits.Load())
	}
}

// TestPlanNVMLDeadline: a hung NVML fails the plan when the caller's
// context ends, saying so, instead of hanging it.
func TestPlanNVMLDeadline(t *testing.T) {
	h := procfsHost(t, "535.104.05")
	n := &countingNVML{NVMLInterface: h.fake.NVML, block: make(chan struct{})}
	defer close(n.block)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := nvcontainer.NewPlanContext(ctx, h.host, privReq(t, cuda124Env...), nvcontainer.Container{}, &nvcontainer.PlanOptions{NVML: n})
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("plan took %v with a 100 ms deadline", took)
	}
	if !errors.Is(err, requirement.ErrUnknownFact) || !strings.Contains(err.Error(), "asking NVML: context deadline exceeded") {
		t.Errorf("hung NVML: %v; want the brand unknown, saying NVML ran out of time", err)
	}
}
