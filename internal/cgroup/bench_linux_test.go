package cgroup

import (
	"slices"
	"testing"

	"github.com/opencontainers/cgroups"
	devconfig "github.com/opencontainers/cgroups/devices/config"
	"github.com/stretchr/testify/require"
)

// tenRules are ten GPU-like nodes, c 195:0..9 rw.
func tenRules() ([]Rule, []*devconfig.Rule) {
	var rules []Rule
	var oci []*devconfig.Rule
	for i := range uint32(10) {
		rules = append(rules, Rule{Major: 195, Minor: i})
		oci = append(oci, &devconfig.Rule{Type: 'c', Major: 195, Minor: int64(i), Permissions: "rw", Allow: true})
	}
	return rules, oci
}

// BenchmarkAllow measures granting ten nodes and taking them back, through
// this package (nvc) and, as the alternative, by rewriting the whole rule
// set with opencontainers/cgroups as "runc update" does (which needs the
// full set, so it only serves a caller that knows it).
func BenchmarkAllow(b *testing.B) {
	rules, oci := tenRules()
	v1Existing := []*devconfig.Rule{{Type: 'c', Major: 1, Minor: 3, Permissions: "rwm", Allow: true}}
	b.Run("v1/nvc", func(b *testing.B) {
		dir := newCgroup(b, v1DevicesMount(b))
		writeControl(b, dir, "devices.deny", "a")
		writeControl(b, dir, "devices.allow", "c 1:3 rwm")
		benchAllow(b, dir, rules)
	})
	b.Run("v1/opencontainers", func(b *testing.B) {
		dir := newCgroup(b, v1DevicesMount(b))
		writeControl(b, dir, "devices.deny", "a")
		benchSet(b, cgroups.DevicesSetV1, dir, v1Existing, append(slices.Clone(v1Existing), oci...))
	})
	b.Run("v2/nvc", func(b *testing.B) {
		dir := newCgroup(b, v2Mount(b))
		attachRunc(b, dir, runcRules)
		benchAllow(b, dir, rules)
	})
	b.Run("v2/opencontainers", func(b *testing.B) {
		dir := newCgroup(b, v2Mount(b))
		benchSet(b, cgroups.DevicesSetV2, dir, runcRules, append(slices.Clone(runcRules), oci...))
	})
}

func benchAllow(b *testing.B, dir string, rules []Rule) {
	c, err := OpenPath(dir)
	require.NoError(b, err)
	defer c.Close()
	for b.Loop() {
		undo, err := c.Allow(rules)
		require.NoError(b, err)
		require.NoError(b, undo())
	}
}

func benchSet(b *testing.B, set func(string, *cgroups.Resources) error, dir string, before, after []*devconfig.Rule) {
	require.NoError(b, set(dir, &cgroups.Resources{Devices: before}))
	for b.Loop() {
		require.NoError(b, set(dir, &cgroups.Resources{Devices: after}))
		require.NoError(b, set(dir, &cgroups.Resources{Devices: before}))
	}
}
