package nvcontainer_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-nvc/nvc/capabilities"
	"github.com/go-nvc/nvc/internal/fakehost"
	"github.com/go-nvc/nvc/internal/liblink"
)

// The CDI spec carries a plan's links as TARGET::LINK pairs, and the CDI
// hook classifies them with liblink.IsSONAME: for its decisions to be
// Apply's, every planned link's Replace must be what IsSONAME says, on
// every layout and with every capability.
func TestPlanReplaceIsSONAME(t *testing.T) {
	for _, layout := range []fakehost.Layout{fakehost.Debian, fakehost.Fedora} {
		t.Run(string(layout), func(t *testing.T) {
			h := newTestHost(t, &fakehost.Options{Layout: layout})
			for _, spec := range []string{"", debianRootfs, fedoraRootfs} {
				p := h.plan(t, capsRequest(capabilities.All), spec, nil)
				require.NotEmpty(t, p.Symlinks, "layout %q: no symlinks planned", layout)
				for _, s := range p.Symlinks {
					assert.Equal(t, liblink.IsSONAME(s.Path, s.Target), s.Replace, "layout %q: %s -> %s: Replace", layout, s.Path, s.Target)
				}
			}
		})
	}
}
