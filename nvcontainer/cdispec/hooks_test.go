package cdispec_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	specs "tags.cncf.io/container-device-interface/specs-go"

	"github.com/go-nvc/nvc/nvcontainer/cdispec"
)

func hookSpec() *specs.Spec {
	hook := func(name string) *specs.Hook {
		return &specs.Hook{HookName: "createContainer", Path: "/usr/bin/nvidia-cdi-hook", Args: []string{"nvidia-cdi-hook", name}}
	}
	return &specs.Spec{
		ContainerEdits: specs.ContainerEdits{Hooks: []*specs.Hook{hook("create-symlinks"), hook("update-ldcache")}},
		Devices:        []specs.Device{{Name: "0", ContainerEdits: specs.ContainerEdits{Hooks: []*specs.Hook{hook("update-ldcache")}}}},
	}
}

// TestRemoveHooks: the hooks named go from the common and the device
// edits, "all" removes every one, an unknown name is refused.
func TestRemoveHooks(t *testing.T) {
	s := hookSpec()
	require.NoError(t, cdispec.RemoveHooks(s, []string{"update-ldcache"}))
	require.Len(t, s.ContainerEdits.Hooks, 1)
	assert.Equal(t, "create-symlinks", s.ContainerEdits.Hooks[0].Args[1])
	assert.Empty(t, s.Devices[0].ContainerEdits.Hooks)

	s = hookSpec()
	require.NoError(t, cdispec.RemoveHooks(s, []string{cdispec.HookAll}))
	assert.Empty(t, s.ContainerEdits.Hooks)

	err := cdispec.RemoveHooks(hookSpec(), []string{"bogus"})
	assert.ErrorIs(t, err, cdispec.ErrInvalid)
	assert.ErrorContains(t, err, `"bogus"`)
}
