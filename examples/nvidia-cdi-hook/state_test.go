//go:build !cgo

package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestStateFromFile(t *testing.T) {
	root := libRoot(t)
	file := filepath.Join(t.TempDir(), "state.json")
	require.NoError(t, os.WriteFile(file, []byte(`{"bundle":"/x","root":"`+root+`"}`), 0o644))
	// stdin is not a state: only the file can give the root.
	code, stderr := runHookStdin(t, "garbage", "update-ldcache", "--folder", "/opt/nv", "--container-spec", file)
	require.Equal(t, 0, code, "exit status: %s", stderr)
	require.Len(t, findInCache(t, root, "libnvtest.so.1"), 1, "cache not written through --container-spec")
}
