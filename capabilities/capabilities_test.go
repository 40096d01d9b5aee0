package capabilities_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-nvc/nvc/capabilities"
)

func TestParse(t *testing.T) {
	c := capabilities.Of
	tests := []struct {
		name string
		in   string
		want capabilities.Set
	}{
		{"two classes", "compute,utility", c(capabilities.Compute, capabilities.Utility)},
		{"order does not matter", "utility,compute", c(capabilities.Compute, capabilities.Utility)},
		{"items trimmed, empty items skipped", " video , ,ngx,", c(capabilities.Video, capabilities.NGX)},
		{"duplicates collapse", "graphics,graphics", c(capabilities.Graphics)},
		{"all", "all", capabilities.All},
		{"all with others", "compute,all", capabilities.All},
		{"every name", "compat32,compute,display,graphics,ngx,utility,video", capabilities.All},
		// Empty or unset means utility (libnvidia-container's documented default).
		{"empty means default", "", capabilities.Default},
		{"blank means default", " , ,", capabilities.Default},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := capabilities.Parse(tt.in)
			require.NoError(t, err, "Parse(%q)", tt.in)
			assert.Equal(t, tt.want, got, "Parse(%q)", tt.in)
		})
	}
}

func TestParseUnknown(t *testing.T) {
	tests := []struct{ in, msg string }{
		{"compute,foo", `parsing driver capabilities "compute,foo": unknown capability "foo"`},
		// The hook rejects "none"; so do we.
		{"none", `parsing driver capabilities "none": unknown capability "none"`},
		// Names are case-sensitive, as in the hook.
		{"Compute", `parsing driver capabilities "Compute": unknown capability "Compute"`},
		// "all" does not excuse an unknown word here (nvcontainer applies the hook's laxer rule).
		{"all, bogus ", `parsing driver capabilities "all, bogus ": unknown capability "bogus"`},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			_, err := capabilities.Parse(tt.in)
			require.Error(t, err, "Parse(%q) succeeded", tt.in)
			assert.EqualError(t, err, tt.msg, "Parse(%q)", tt.in)
			assert.ErrorIs(t, err, capabilities.ErrUnknown, "Parse(%q)", tt.in)
		})
	}
}

func TestString(t *testing.T) {
	tests := []struct {
		set  capabilities.Set
		want string
	}{
		{0, ""},
		{capabilities.Default, "utility"},
		{capabilities.HookDefault, "compute,utility"},
		// Canonical order is alphabetical: the toolkit's default supported-driver-capabilities.
		{capabilities.All, "compat32,compute,display,graphics,ngx,utility,video"},
		{capabilities.Of(capabilities.Video, capabilities.Compat32), "compat32,video"},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%#x", uint8(tt.set)), func(t *testing.T) {
			assert.Equal(t, tt.want, tt.set.String(), "Set(%#x).String()", uint8(tt.set))
		})
	}
}

func TestRoundTrip(t *testing.T) {
	for s := capabilities.Set(1); s <= capabilities.All; s++ {
		got, err := capabilities.Parse(s.String())
		require.NoError(t, err, "Parse(%q)", s.String())
		require.Equal(t, s, got, "Parse(%q)", s.String())
	}
}

func TestCapabilityString(t *testing.T) {
	for _, c := range capabilities.All.List() {
		got, err := capabilities.ParseCapability(c.String())
		if assert.NoError(t, err, "ParseCapability(%q)", c.String()) {
			assert.Equal(t, c, got, "ParseCapability(%q)", c.String())
		}
	}
	assert.Equal(t, "capability(0x3)", capabilities.Capability(0x3).String(), "two-bit value")
	assert.Equal(t, "capability(0x80)", capabilities.Capability(0x80).String(), "out-of-range bit")
}

func TestSetOperations(t *testing.T) {
	cu := capabilities.Of(capabilities.Compute, capabilities.Utility)
	assert.True(t, cu.Has(capabilities.Compute), "Has(Compute) on %v", cu)
	assert.False(t, cu.Has(capabilities.Video), "Has(Video) on %v", cu)
	assert.False(t, cu.Has(0), "Has(0) on %v", cu)
	assert.Equal(t, capabilities.Default, cu.Intersect(capabilities.Of(capabilities.Utility, capabilities.Video)), "Intersect")
	assert.Equal(t, "compute,ngx,utility", cu.Union(capabilities.Of(capabilities.NGX)).String(), "Union")
	assert.Equal(t, capabilities.Of(capabilities.Compute), cu.Minus(capabilities.Default), "Minus")
	assert.True(t, cu.SubsetOf(capabilities.All), "%v SubsetOf All", cu)
	assert.False(t, capabilities.All.SubsetOf(cu), "All SubsetOf %v", cu)
	assert.Equal(t, 2, cu.Len(), "Len of %v", cu)
	assert.Equal(t, 7, capabilities.All.Len(), "Len of All")
}

// libnvidia-container: --video also sets COMPUTE_LIBS, --display also sets
// GRAPHICS_LIBS (libnvidia-container's --help text and its library lists).
func TestExpand(t *testing.T) {
	tests := []struct{ in, want string }{
		{"video", "compute,video"},
		{"display", "display,graphics"},
		{"video,display,utility", "compute,display,graphics,utility,video"},
		{"compute,utility", "compute,utility"},
		{"ngx,compat32", "compat32,ngx"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			s, err := capabilities.Parse(tt.in)
			require.NoError(t, err)
			assert.Equal(t, tt.want, s.Expand().String(), "Parse(%q).Expand()", tt.in)
		})
	}
}

func TestJSON(t *testing.T) {
	type doc struct {
		Caps capabilities.Set `json:"caps"`
	}
	for _, s := range []capabilities.Set{0, capabilities.Default, capabilities.All} {
		t.Run(fmt.Sprintf("%#x", uint8(s)), func(t *testing.T) {
			b, err := json.Marshal(doc{s})
			require.NoError(t, err)
			var back doc
			require.NoError(t, json.Unmarshal(b, &back), "Unmarshal(%s)", b)
			assert.Equal(t, s, back.Caps, "round trip of %s", b)
		})
	}
	var d doc
	assert.ErrorIs(t, json.Unmarshal([]byte(`{"caps":"compute,foo"}`), &d), capabilities.ErrUnknown, "bad JSON value")
}
