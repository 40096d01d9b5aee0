//go:build !cgo

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/go-nvc/nvc/internal/oci"
	"github.com/go-nvc/nvc/internal/testutil"
)

// The hook finds the root with internal/oci (tested there); this checks
// the wiring: crun's root first, root.path joined to the bundle, refusals.
func TestContainerRoot(t *testing.T) {
	spec := func(root string) string { return `{"ociVersion":"1.0.2","process":{},"root":{"path":"` + root + `"}}` }
	bundle, slash := testutil.Bundle(t, spec("rootfs")), testutil.Bundle(t, spec("/.."))
	tests := []struct {
		name, state, want, err string
	}{
		{"crun root wins", `{"bundle":"` + bundle + `","root":"/run/crun/rootfs"}`, "/run/crun/rootfs", ""},
		{"relative root.path", `{"bundle":"` + bundle + `"}`, filepath.Join(bundle, "rootfs"), ""},
		{"no bundle", `{"pid":1,"root":"/r"}`, "", `no "bundle" or "bundlePath"`},
		{"no config.json", `{"bundle":"/nonexistent"}`, "", "loading OCI spec"},
		{"root is /", `{"bundle":"/x","root":"/"}`, "", `refusing root "/"`},
		{"root.path escapes to /", `{"bundle":"` + slash + `"}`, "", `refusing root "/"`},
		{"not JSON", `pid=1`, "", "parsing OCI state"},
		{"too large", `{"bundle":"` + strings.Repeat("x", oci.MaxStateSize) + `"}`, "", "more than"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := containerRoot(strings.NewReader(tt.state))
			if tt.err != "" {
				require.ErrorContains(t, err, tt.err, "got %q", got)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want, got)
		})
	}
}

func TestStateFromFile(t *testing.T) {
	root := libRoot(t)
	file := filepath.Join(t.TempDir(), "state.json")
	require.NoError(t, os.WriteFile(file, []byte(`{"bundle":"/x","root":"`+root+`"}`), 0o644))
	// stdin is not a state: only the file can give the root.
	code, stderr := runHookStdin(t, "garbage", "update-ldcache", "--folder", "/opt/nv", "--container-spec", file)
	require.Equal(t, 0, code, "exit status: %s", stderr)
	require.Len(t, findInCache(t, root, "libnvtest.so.1"), 1, "cache not written through --container-spec")
}
