package cdihook

import (
	"context"
	"errors"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-nvc/nvc/internal/oci"
	"github.com/go-nvc/nvc/internal/testutil"
)

// The root is found with internal/oci (tested there); this checks the
// wiring: crun's root first, root.path joined to the bundle, refusals.
func TestContainerRoot(t *testing.T) {
	spec := func(root string) string { return `{"ociVersion":"1.0.2","process":{},"root":{"path":"` + root + `"}}` }
	bundle, slash := testutil.Bundle(t, spec("rootfs")), testutil.Bundle(t, spec("/.."))
	tests := []struct {
		name, state, want, err string
		invalid                bool
	}{
		{"crun root wins", `{"bundle":"` + bundle + `","root":"/run/crun/rootfs"}`, "/run/crun/rootfs", "", false},
		{"relative root.path", `{"bundle":"` + bundle + `"}`, filepath.Join(bundle, "rootfs"), "", false},
		{"no bundle", `{"pid":1,"root":"/r"}`, "", `no "bundle" or "bundlePath"`, false},
		{"no config.json", `{"bundle":"/nonexistent"}`, "", "loading OCI spec", false},
		{"root is /", `{"bundle":"/x","root":"/"}`, "", `refusing root "/"`, true},
		{"root.path escapes to /", `{"bundle":"` + slash + `"}`, "", `refusing root "/"`, true},
		{"not JSON", `pid=1`, "", "parsing OCI state", false},
		{"too large", `{"bundle":"` + strings.Repeat("x", oci.MaxStateSize) + `"}`, "", "more than", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ContainerRoot(context.Background(), strings.NewReader(tt.state))
			if tt.err != "" {
				require.ErrorContains(t, err, tt.err, "got %q", got)
				assert.Equal(t, tt.invalid, errors.Is(err, ErrInvalidRootfs), "errors.Is(%v, ErrInvalidRootfs)", err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want, got)
		})
	}
}

// A state that never comes (a runtime that keeps the pipe open) does not
// hold ContainerRoot past its context; a context already done reads
// nothing.
func TestContainerRootContext(t *testing.T) {
	t.Run("deadline", func(t *testing.T) {
		r, w := io.Pipe()
		defer w.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		start := time.Now()
		_, err := ContainerRoot(ctx, r)
		require.ErrorIs(t, err, context.DeadlineExceeded)
		assert.Less(t, time.Since(start), 5*time.Second, "ContainerRoot waited past its deadline")
	})
	t.Run("canceled", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		in := strings.NewReader(`{"bundle":"/x","root":"/r"}`)
		_, err := ContainerRoot(ctx, in)
		require.ErrorIs(t, err, context.Canceled)
		assert.Equal(t, int64(in.Size()), int64(in.Len()), "read the state after the context was done")
	})
}
