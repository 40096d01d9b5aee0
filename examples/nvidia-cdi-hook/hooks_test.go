//go:build !cgo

package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-nvc/nvc/internal/testutil"
)

// The actions are tested in package cdihook; these check that each
// subcommand's flags reach its action and that what it reports is logged.

// The image ships regular files at libcuda.so (kept, logged at info) and
// at libnvidia-ml.so.1 (a SONAME link: refused, exit 1 with an error
// naming it).
func TestCreateSymlinksLogsKept(t *testing.T) {
	root := testutil.Tree(t, `
		file usr/lib64/libcuda.so "image libcuda.so"
		file usr/lib64/libnvidia-ml.so.1 "image libnvidia-ml.so.1"
	`)
	code, stderr := runHook(t, root, "create-symlinks", "--link", "libcuda.so.1::/usr/lib64/libcuda.so",
		"--link", "libnvidia-ml.so.550.54.15::/usr/lib64/libnvidia-ml.so.1")
	msg := "want exit 1, a note naming libcuda.so and an error naming libnvidia-ml.so.1"
	assert.Equal(t, 1, code, msg)
	assert.Contains(t, stderr, `link=/usr/lib64/libcuda.so `, msg)
	assert.Contains(t, stderr, "found=\"regular file\"", msg)
	assert.Contains(t, stderr, `nvidia-cdi-hook create-symlinks: `, msg)
	assert.Contains(t, stderr, `"/usr/lib64/libnvidia-ml.so.1" is a regular file`, msg)
}

// Repeated --link flags make each link once; a second run changes nothing.
func TestCreateSymlinksFlags(t *testing.T) {
	root := testutil.Tree(t, "dir usr/lib64\n")
	args := []string{"create-symlinks", "--link", "libcuda.so.1::/usr/lib64/libcuda.so", "--link", "libcuda.so.1::/usr/lib64/libcuda.so"}
	for i := range 2 {
		code, stderr := runHook(t, root, args...)
		require.Equal(t, 0, code, "run %d: exit status: %s", i, stderr)
	}
	got, err := os.Readlink(filepath.Join(root, "usr/lib64/libcuda.so"))
	require.NoError(t, err, "readlink")
	require.Equal(t, "libcuda.so.1", got, "readlink")
}

func TestEnableCUDACompatFlags(t *testing.T) {
	tests := []struct {
		name string
		args []string
		code int
		conf bool
		msg  string
	}{
		{"separate value", []string{"--host-driver-version", "550.54.15"}, 0, true, "enabled=true"},
		{"=VERSION", []string{"--host-driver-version=550.54.15"}, 0, true, "enabled=true"},
		{"empty version", []string{"--host-driver-version="}, 0, false, "no host driver or CUDA version"},
		{"no flag", nil, 0, false, "no host driver or CUDA version"},
		{"CUDA version, library without note", []string{"--host-cuda-version", "12.4"}, 0, false, "no .note.cuda.fwd_compatibility note"},
		{"other compat dir", []string{"--host-driver-version", "550.54.15", "--cuda-compat-container-root", "/opt/none"}, 0, false, "in /opt/none, found 0"},
		{"not newer", []string{"--host-driver-version", "575.10.01"}, 0, false, "not newer than the host driver (major 575)"},
		{"bad version", []string{"--host-driver-version", "x.1"}, 1, false, `nvidia-cdi-hook enable-cuda-compat: parsing host driver version "x.1"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := testutil.Tree(t, "file usr/local/cuda/compat/libcuda.so.570.86.10\n")
			code, stderr := runHook(t, root, append([]string{"--debug", "enable-cuda-compat"}, tt.args...)...)
			require.Equal(t, tt.code, code, "exit status: %s", stderr)
			assert.Contains(t, stderr, tt.msg)
			b, err := os.ReadFile(filepath.Join(root, "etc/ld.so.conf.d/00-compat-nvidia-cdi-hook.conf"))
			if tt.conf {
				require.NoError(t, err, "the compat entry")
				assert.Equal(t, "/usr/local/cuda/compat\n", string(b), "the compat entry")
			} else {
				assert.ErrorIs(t, err, os.ErrNotExist, "wrote a compat entry")
			}
		})
	}
}

// --proc-root names the host's procfs; what mounts nothing is logged
// (the masking itself, in a container's mount namespace, is tested in
// package cdihook).
func TestDeviceNodeFlags(t *testing.T) {
	on := testutil.Tree(t, "file driver/nvidia/params \"ModifyDeviceFiles: 1\\n\"\n")
	off := testutil.Tree(t, "file driver/nvidia/params \"ModifyDeviceFiles: 0\\n\"\n")
	tests := []struct {
		name, proc, msg string
	}{
		{"no params on the host", testutil.Tree(t, "dir driver\n"), "level=DEBUG msg=\"no driver params on the host"},
		{"already 0", off, "level=DEBUG msg=\"the host's params do not say ModifyDeviceFiles: 1"},
		{"no params in the container", on, "level=WARN msg=\"the container has no driver params"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := testutil.Tree(t, "dir proc\n")
			code, stderr := runHook(t, root, "--debug", "disable-device-node-modification", "--proc-root", tt.proc)
			require.Equal(t, 0, code, "exit status: %s", stderr)
			assert.Contains(t, stderr, tt.msg)
		})
	}
}

func TestEnableCUDACompatContainerRootFlag(t *testing.T) {
	root := testutil.Tree(t, "file opt/compat/libcuda.so.570.86.10\n")
	code, stderr := runHook(t, root, "enable-cuda-compat", "--host-driver-version", "550.54.15", "--cuda-compat-container-root", "/opt/compat")
	require.Equal(t, 0, code, "exit status: %s", stderr)
	b, err := os.ReadFile(filepath.Join(root, "etc/ld.so.conf.d/00-compat-nvidia-cdi-hook.conf"))
	require.NoError(t, err, "the compat entry")
	assert.Equal(t, "/opt/compat\n", string(b), "the compat entry")
}

func TestChmodFlags(t *testing.T) {
	tests := []struct {
		name string
		args []string
		code int
		mode os.FileMode
		msg  string
	}{
		{"mode and paths", []string{"--mode", "755", "--path", "/dev/dri", "--path", "/dev/nvidia-caps"}, 0, 0o755, "changed=[/dev/dri]"},
		{"no path", []string{"--mode", "755"}, 0, 0o700, ""},
		{"bad mode", []string{"--mode", "rwx", "--path", "/dev/dri"}, 1, 0o700, `--mode "rwx" is not an octal mode`},
		{"no mode", []string{"--path", "/dev/dri"}, 1, 0o700, `--mode "" is not an octal mode`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := testutil.Tree(t, "dir dev/dri 0700\ndir dev/nvidia-caps 0755\n")
			code, stderr := runHook(t, root, append([]string{"--debug", "chmod"}, tt.args...)...)
			require.Equal(t, tt.code, code, "exit status: %s", stderr)
			assert.Contains(t, stderr, tt.msg)
			fi, err := os.Stat(filepath.Join(root, "dev/dri"))
			require.NoError(t, err)
			assert.Equal(t, tt.mode, fi.Mode().Perm(), "mode of /dev/dri")
		})
	}
}

func TestUpdateApplicationProfileHook(t *testing.T) {
	root := testutil.RootTree(t, "char dev/nvidia0 195 0 0666\nchar dev/nvidia3 195 3 0666\n")
	code, stderr := runHook(t, root, "update-application-profile")
	require.Equal(t, 0, code, "exit status: %s", stderr)
	b, err := os.ReadFile(filepath.Join(root, "etc/nvidia/nvidia-application-profiles-rc.d/10-container.conf"))
	require.NoError(t, err, "the profile")
	assert.Contains(t, string(b), `["EGLVisibleDGPUDevices",0x9]`)
}
