package devices_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-nvc/nvc/devices"
)

// TestFindNVMLHelper: $NVC_NVML_HELPER wins, then nvc-nvml next to the
// running executable (a regular file, not a directory), then on PATH;
// "" when there is none.
func TestFindNVMLHelper(t *testing.T) {
	exe, err := os.Executable()
	require.NoError(t, err)
	beside := filepath.Join(filepath.Dir(exe), devices.NVMLHelperName)
	_, err = os.Lstat(beside)
	require.ErrorIs(t, err, os.ErrNotExist, "%s exists before the test", beside)
	onPath := filepath.Join(t.TempDir(), devices.NVMLHelperName)
	require.NoError(t, os.WriteFile(onPath, []byte("#!/bin/sh\n"), 0o755))

	for _, tc := range []struct {
		name   string
		env    string
		beside os.FileMode // 0: none; ModeDir: a directory
		path   string
		want   string
	}{
		{"none", "", 0, t.TempDir(), ""},
		{"on PATH", "", 0, filepath.Dir(onPath), onPath},
		{"beside wins over PATH", "", 0o755, filepath.Dir(onPath), beside},
		{"a directory beside is skipped", "", os.ModeDir, filepath.Dir(onPath), onPath},
		{"environment wins", "/nonexistent/nvc-nvml", 0o755, filepath.Dir(onPath), "/nonexistent/nvc-nvml"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv(devices.NVMLHelperEnv, tc.env)
			t.Setenv("PATH", tc.path)
			switch {
			case tc.beside == os.ModeDir:
				require.NoError(t, os.Mkdir(beside, 0o755))
			case tc.beside != 0:
				require.NoError(t, os.WriteFile(beside, []byte("#!/bin/sh\n"), tc.beside))
			}
			t.Cleanup(func() { os.RemoveAll(beside) })
			assert.Equal(t, tc.want, devices.FindNVMLHelper())
		})
	}
}
