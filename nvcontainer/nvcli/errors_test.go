package nvcli_test

import (
	"errors"
	"fmt"
	"io/fs"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-nvc/nvc/devices"
	"github.com/go-nvc/nvc/nvcontainer"
	"github.com/go-nvc/nvc/nvcontainer/nvcli"
)

func TestErrorFor(t *testing.T) {
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
		{"already prefixed", &nvcli.Error{Prefix: nvcli.PrefixInitialization, Err: cause}, "initialization error: boom", cause},
		{"anything else", cause, "detection error: boom", cause},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := nvcli.ErrorFor(tt.err)
			require.Error(t, got)
			var ce *nvcli.Error
			assert.True(t, errors.As(got, &ce) || errors.As(tt.err, new(*nvcontainer.PlanError)), "%v: neither an *Error nor a *PlanError", got)
			assert.Truef(t, len(got.Error()) >= len(tt.want) && got.Error()[:len(tt.want)] == tt.want, "%q, want %q…", got.Error(), tt.want)
			assert.ErrorIs(t, got, tt.is)
		})
	}
	assert.NoError(t, nvcli.ErrorFor(nil), "ErrorFor(nil)")
}
