package nvcontainer_test

import (
	"errors"
	"fmt"
	"io/fs"
	"testing"

	"github.com/go-nvc/nvc/devices"
	"github.com/go-nvc/nvc/nvcontainer"
)

func TestCLIErrorFor(t *testing.T) {
	cause := errors.New("boom")
	unknown := &devices.DeviceIDError{ID: "9", Reason: "unknown device", Err: devices.ErrUnknownDevice}
	tests := []struct {
		name string
		err  error
		want string
		is   error // must still match
	}{
		{"plan error keeps its line", &nvcontainer.PlanError{Stage: nvcontainer.StageRequirement, Err: cause},
			"requirement error: boom", cause},
		{"unknown device: ID first", fmt.Errorf("planning: %w", &nvcontainer.PlanError{Stage: nvcontainer.StageDevice, Err: unknown}),
			"planning: device error: 9: unknown device", devices.ErrUnknownDevice},
		{"loader cache step", &nvcontainer.ApplyError{Step: nvcontainer.StepLDCache, Path: "/etc/ld.so.cache", Err: fs.ErrPermission},
			"ldcache error: ", fs.ErrPermission},
		{"any other step", &nvcontainer.ApplyError{Step: nvcontainer.StepMount, Path: "/usr/bin/nvidia-smi", Err: fs.ErrNotExist},
			"mount error: ", fs.ErrNotExist},
		{"anything else", cause, "detection error: boom", cause},
	}
	for _, tt := range tests {
		got := nvcontainer.CLIErrorFor(tt.err)
		var ce *nvcontainer.CLIError
		wrapped := errors.As(got, &ce) || errors.As(tt.err, new(*nvcontainer.PlanError))
		if got == nil || !wrapped || len(got.Error()) < len(tt.want) || got.Error()[:len(tt.want)] != tt.want || !errors.Is(got, tt.is) {
			t.Errorf("%s: %v; want %q… matching %v", tt.name, got, tt.want, tt.is)
		}
	}
	if nvcontainer.CLIErrorFor(nil) != nil {
		t.Error("CLIErrorFor(nil) != nil")
	}
}

func TestCLIContainer(t *testing.T) {
	ctr, proc, err := nvcontainer.CLIContainer(42, "/run/ctr/rootfs")
	if err != nil || ctr != (nvcontainer.Container{PID: 42, Rootfs: "/run/ctr/rootfs"}) || proc != "" {
		t.Errorf("--pid=42: %+v %q %v", ctr, proc, err)
	}
	// Standalone mode: TestCLIContainerStandalone.
	for _, bad := range []string{"", "rootfs", "/", "//", "/.."} {
		if _, _, err := nvcontainer.CLIContainer(1, bad); !errors.Is(err, nvcontainer.ErrInvalidRootfs) || err.Error() != "invalid rootfs directory" {
			t.Errorf("rootfs %q: %v, want invalid rootfs directory", bad, err)
		}
	}
}
