package nvcontainer_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-nvc/nvc/nvcontainer/request"
)

// The plan warns once for all the requested IMEX channels the host has
// no node for, naming the first few and the count.
func TestPlanMissingIMEXSummary(t *testing.T) {
	h := newTestHost(t, nil)
	const first = 1 << 19 // no host has these
	req := privReq(t, "NVIDIA_VISIBLE_DEVICES=0", "NVIDIA_IMEX_CHANNELS="+numbers(first, first+request.MaxIMEXChannels))
	p := h.plan(t, req, "", nil)
	var imex []string
	for _, w := range p.Warnings {
		if strings.Contains(w, "IMEX") {
			imex = append(imex, w)
		}
	}
	require.Len(t, imex, 1, "IMEX warnings %q, want one summary of 2048 channels", imex)
	assert.Contains(t, imex[0], "channel524288, channel524289", "IMEX warning, want one summary of 2048 channels")
	assert.Contains(t, imex[0], "(2048 in all)", "IMEX warning, want one summary of 2048 channels")
}

// numbers is "from,from+1,...,to-1".
func numbers(from, to int) string {
	var b strings.Builder
	for i := from; i < to; i++ {
		if i > from {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(i))
	}
	return b.String()
}
