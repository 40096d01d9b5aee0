package nvcontainer_test

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-nvc/nvc/internal/fakehost"
	"github.com/go-nvc/nvc/internal/testutil"
	"github.com/go-nvc/nvc/nvcontainer"
)

// update rewrites the golden files: go test ./nvcontainer -run Golden -update
var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// goldenRequest is the fixed request of the golden plan: two GPUs, every
// capability, an IMEX channel, a requirement that holds, the hook's
// default CUDA compat mode.
var goldenRequest = []string{
	"NVIDIA_VISIBLE_DEVICES=0,3",
	"NVIDIA_DRIVER_CAPABILITIES=all",
	"NVIDIA_REQUIRE_CUDA=cuda>=12.0 brand=tesla",
	"NVIDIA_IMEX_CHANNELS=0",
}

// goldenPlan plans goldenRequest for a generated DGX A100 and a Debian
// image with newer compat libraries, and returns its JSON with the
// generated directories replaced by $HOST and $ROOTFS.
func goldenPlan(t *testing.T) []byte {
	t.Helper()
	h := newTestHost(t, &fakehost.Options{Machine: "dgxa100"})
	rootfs := testutil.Tree(t, compatRootfs("570.86.10"))
	// Process 4242 of a stand-in procfs sees the host's root.
	proc := testutil.Tree(t, "symlink 4242/root /")
	p, err := nvcontainer.NewPlan(h.host, privReq(t, goldenRequest...), nvcontainer.Container{PID: 4242, Rootfs: rootfs},
		&nvcontainer.PlanOptions{GOARCH: "amd64", ProcRoot: proc})
	require.NoError(t, err)
	b, err := p.JSON()
	require.NoError(t, err)
	b = bytes.ReplaceAll(b, []byte(rootfs), []byte("$ROOTFS"))
	b = bytes.ReplaceAll(b, []byte(h.fake.Root), []byte("$HOST"))
	return b
}

// TestPlanGolden pins the plan's JSON layout (PlanVersion 1): a change in
// a field's name, order or meaning shows up here.
func TestPlanGolden(t *testing.T) {
	got := goldenPlan(t)
	file := filepath.Join("testdata", "plan-dgxa100.json")
	if *update {
		require.NoError(t, os.WriteFile(file, got, 0o644))
	}
	want, err := os.ReadFile(file)
	require.NoError(t, err)
	assert.Empty(t, firstDiff(got, want), "plan differs from %s (run with -update if the change is intended)", file)
}

// TestPlanDeterministic makes two plans from two separately generated
// hosts and rootfs trees: their normalised JSON is byte-identical.
func TestPlanDeterministic(t *testing.T) {
	a, b := goldenPlan(t), goldenPlan(t)
	assert.Empty(t, firstDiff(a, b), "two plans differ")
	h := newTestHost(t, nil)
	rootfs := testutil.Tree(t, compatRootfs("570.86.10"))
	req := privReq(t, goldenRequest...)
	p1, err1 := nvcontainer.NewPlan(h.host, req, nvcontainer.Container{Rootfs: rootfs}, nil)
	p2, err2 := nvcontainer.NewPlan(h.host, req, nvcontainer.Container{Rootfs: rootfs}, nil)
	require.NoError(t, err1, "same host and rootfs, first plan")
	require.NoError(t, err2, "same host and rootfs, second plan")
	assert.Empty(t, firstDiff(encode(t, p1), encode(t, p2)), "same host and rootfs, different plans")
}

// TestPlanJSONRoundTrip checks that the JSON holds the whole plan: parsed
// back, it equals the plan it came from.
func TestPlanJSONRoundTrip(t *testing.T) {
	h := newTestHost(t, &fakehost.Options{MIG: map[int][]string{1: {"3g.20gb", "1g.5gb"}}})
	for _, tc := range []struct {
		name string
		env  []string
	}{
		{"golden", goldenRequest},
		{"mig device", []string{"NVIDIA_VISIBLE_DEVICES=1:1,0"}},
		{"all, mig monitor", []string{"NVIDIA_VISIBLE_DEVICES=all", "NVIDIA_MIG_MONITOR_DEVICES=all"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := h.plan(t, privReq(t, tc.env...), compatRootfs("570.86.10"), nil)
			b, err := p.JSON()
			require.NoError(t, err)
			q, err := nvcontainer.ParsePlan(b)
			require.NoError(t, err)
			assert.Equal(t, p, q, "%v: parsed plan differs", tc.env)
		})
	}
	_, err := nvcontainer.ParsePlan([]byte(`{"version": 2}`))
	assert.EqualError(t, err, "parsing plan: layout version 2, want 1", "version 2")
	_, err = nvcontainer.ParsePlan([]byte(`{"version": 1, "mounts": 3}`))
	assert.Error(t, err, "mounts as a number accepted")
}

// firstDiff shows the first differing line of two texts.
func firstDiff(a, b []byte) string {
	la, lb := bytes.Split(a, []byte("\n")), bytes.Split(b, []byte("\n"))
	for i := 0; i < len(la) || i < len(lb); i++ {
		var x, y []byte
		if i < len(la) {
			x = la[i]
		}
		if i < len(lb) {
			y = lb[i]
		}
		if !bytes.Equal(x, y) {
			return "line " + strconv.Itoa(i+1) + ":\n got: " + string(x) + "\nwant: " + string(y)
		}
	}
	return ""
}
