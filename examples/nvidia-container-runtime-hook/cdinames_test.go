package main

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// In mode=auto (the default) with only CDI names in
// NVIDIA_VISIBLE_DEVICES, NVIDIA's hook refuses ("invoking the NVIDIA
// Container Runtime Hook directly … is not supported"); ours deliberately
// configures the devices those names give (nvidia.com/gpu=1 is GPU 1), as
// in legacy mode. In mode=cdi it leaves the container alone. This pins
// that behaviour; the README's runtime section says it is deliberate.
func TestPrestartAutoCDINames(t *testing.T) {
	for _, tc := range []struct {
		name, mode string
		gpu1       bool
	}{
		{"default mode", "", true},
		{"auto", "auto", true},
		{"cdi", "cdi", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newHookCase(t)
			if tc.mode != "" {
				f, err := os.OpenFile(c.config, os.O_APPEND|os.O_WRONLY, 0)
				require.NoError(t, err)
				_, err = f.WriteString("[nvidia-container-runtime]\nmode = " + strconv.Quote(tc.mode) + "\n")
				require.NoError(t, err)
				require.NoError(t, f.Close())
			}
			code, log := c.prestart(t, "NVIDIA_VISIBLE_DEVICES=nvidia.com/gpu=1", "NVIDIA_DRIVER_CAPABILITIES=utility")
			require.Equal(t, 0, code, "exit status; log:\n%s", log)
			var st unix.Stat_t
			err := unix.Stat(filepath.Join("/proc", strconv.Itoa(c.ctr.PID), "root", c.ctr.Rootfs, "dev/nvidia1"), &st)
			if !tc.gpu1 {
				assert.ErrorIs(t, err, unix.ENOENT, "mode %s: the hook gave the container GPU 1; log:\n%s", tc.mode, log)
				assert.Contains(t, log, "the hook does nothing")
				return
			}
			require.NoError(t, err, "the container has no /dev/nvidia1; log:\n%s", log)
			assert.Equal(t, uint32(unix.S_IFCHR), st.Mode&unix.S_IFMT, "/dev/nvidia1 is not a character device")
			assert.Equal(t, uint32(1), unix.Minor(st.Rdev), "/dev/nvidia1 minor")
			assert.Contains(t, log, "devices=1", "the request the hook logged")
		})
	}
}
