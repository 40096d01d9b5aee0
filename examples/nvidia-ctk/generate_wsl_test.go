package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestGenerateWSL: on the simulated WSL2 host, --mode wsl and auto write
// the same spec: one device, "all", with /dev/dxg, even when --device-id
// names a GPU or --no-all-device is given.
func TestGenerateWSL(t *testing.T) {
	for _, args := range [][]string{{"--mode", "wsl"}, {"--mode", "auto"}, {"--mode", "wsl", "--device-id", "0"}, {"--no-all-device"}} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			spec := generateFile(t, "nvidia.json", append([]string{"--simulate", "wsl"}, args...)...)
			require.Equal(t, []string{"all"}, deviceNames(spec.Spec))
			assert.Equal(t, []string{"/dev/dxg"}, nodePaths(spec.Devices[0].ContainerEdits))
		})
	}
}
