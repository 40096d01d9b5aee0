package cdispec

import (
	"fmt"
	"slices"

	specs "tags.cncf.io/container-device-interface/specs-go"
)

// HookAll names every hook in RemoveHooks, as nvidia-ctk cdi generate's
// --disable-hook=all does.
const HookAll = "all"

// HookNames returns the nvidia-cdi-hook commands a spec may run, those this
// package writes and chmod, which only NVIDIA's generator writes (and only
// when enabled).
func HookNames() []string { return slices.Clone(hookNames) }

var hookNames = []string{hookCreateLinks, hookCUDACompat, hookUpdateLDCache, hookNoDeviceNodes, hookAppProfile,
	"chmod"}

// RemoveHooks drops from spec (its common edits and every device's) the
// createContainer hooks running the nvidia-cdi-hook commands named, or
// every hook for HookAll. An unknown name is an error.
func RemoveHooks(spec *specs.Spec, names []string) error {
	for _, n := range names {
		if n != HookAll && !slices.Contains(hookNames, n) {
			return fmt.Errorf("%w: unknown hook %q (want one of %v or %s)", ErrInvalid, n, hookNames, HookAll)
		}
	}
	drop := func(h *specs.Hook) bool {
		return slices.Contains(names, HookAll) || len(h.Args) > 1 && slices.Contains(names, h.Args[1])
	}
	spec.ContainerEdits.Hooks = slices.DeleteFunc(spec.ContainerEdits.Hooks, drop)
	for i := range spec.Devices {
		spec.Devices[i].ContainerEdits.Hooks = slices.DeleteFunc(spec.Devices[i].ContainerEdits.Hooks, drop)
	}
	return nil
}
