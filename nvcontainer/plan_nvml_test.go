package nvcontainer_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

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
	require.NoError(t, err, "R535 with NVML; want a plan")
	require.Equal(t, []string{cuda124Require}, p.Requirements, "R535 with NVML: requirements")
	require.EqualValues(t, 1, n.inits.Load(), "R535 with NVML: NVML started; want once")
	_, err = nvcontainer.NewPlan(h.host, privReq(t, "NVIDIA_VISIBLE_DEVICES=0", "NVIDIA_REQUIRE_ARCH=arch>=9.0"), nvcontainer.Container{}, opts)
	assert.ErrorIs(t, err, requirement.ErrUnsatisfied, "arch>=9.0 on an A100 with NVML; want refused on the known arch 8.0")
	assert.NotErrorIs(t, err, requirement.ErrUnknownFact, "arch>=9.0 on an A100 with NVML; want refused on the known arch 8.0")
	assert.EqualError(t, err, "requirement error: unsatisfied condition: arch>=9.0", "arch>=9.0 on an A100 with NVML")
	h = procfsHost(t, "550.54.15")
	n = &countingNVML{NVMLInterface: h.fake.NVML}
	_, err = nvcontainer.NewPlan(h.host, privReq(t, cuda124Env...), nvcontainer.Container{}, &nvcontainer.PlanOptions{NVML: n})
	assert.NoError(t, err, "R550; want a plan without NVML")
	assert.EqualValues(t, 0, n.inits.Load(), "R550: NVML started; want a plan without NVML")
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
	took := time.Since(start)
	assert.LessOrEqual(t, took, 5*time.Second, "plan took %v with a 100 ms deadline", took)
	if assert.ErrorIs(t, err, requirement.ErrUnknownFact, "hung NVML; want the brand unknown, saying NVML ran out of time") {
		assert.ErrorContains(t, err, "asking NVML: context deadline exceeded", "hung NVML; want the brand unknown, saying NVML ran out of time")
	}
}
