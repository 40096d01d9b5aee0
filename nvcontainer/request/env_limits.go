package request

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Bounds on what one request can carry. An image sets its environment,
// and a request is turned into device nodes, mounts, cgroup rules and log
// lines: without bounds, NVIDIA_IMEX_CHANNELS listing all 2^20 channels
// (7 MiB, inside the runtime spec's limits) made one container start write
// about a million log lines. The bounds are far above what a host has.
// Requests past them are refused with an error naming the variable and
// the bound, which matches [ErrTooLarge].
const (
	// MaxDevices bounds the distinct device IDs of one list
	// (NVIDIA_VISIBLE_DEVICES, NV_GPU, the swarm variables, device volume
	// mounts, --device): a host of 64 GPUs with 7 MIG devices each, every
	// one named twice (index and UUID), needs 1024.
	MaxDevices = 1024
	// MaxIMEXChannels bounds the distinct IMEX channels of one request:
	// 2048 is the driver's default channel count (NVreg_ImexChannelCount).
	MaxIMEXChannels = 2048
	// MaxEnvValue bounds, in bytes, the value of each variable a request
	// reads (NVIDIA_*, NV_GPU, CUDA_VERSION and the swarm variables):
	// MaxDevices MIG UUIDs take about 48 KiB; a CUDA image's
	// NVIDIA_REQUIRE_CUDA about 1 KiB.
	MaxEnvValue = 64 << 10
	// MaxEnvSize bounds, in bytes, all the entries a request reads
	// together (the same variables, each entry "KEY=value" counted as
	// given, repeated keys included). Other variables are not read, and
	// not bounded here. NVIDIA_REQUIRE_* are also at most
	// [MaxRequirements], as nvidia-container-cli takes no more --require.
	MaxEnvSize = 1 << 20
)

// requestVar reports whether the request reads the variable key: the
// NVIDIA_* variables, NV_GPU, CUDA_VERSION and the swarm variables.
func requestVar(key string, swarm []string) bool {
	if strings.HasPrefix(key, "NVIDIA_") || key == EnvLegacyGPU || key == EnvCUDAVersion {
		return true
	}
	for _, s := range swarm {
		if key == s {
			return true
		}
	}
	return false
}

// checkEnvValue refuses a value longer than MaxEnvValue.
func checkEnvValue(key, value string) error {
	if len(value) > MaxEnvValue {
		return fmt.Errorf("reading %s: value of %d bytes, more than MaxEnvValue (%d): %w",
			key, len(value), MaxEnvValue, ErrTooLarge)
	}
	return nil
}

// shortQuote quotes s for an error message, cut to 64 bytes: a value an
// image chose may be large, and an error is logged.
func shortQuote(s string) string {
	const n = 64
	if len(s) <= n {
		return strconv.Quote(s)
	}
	return strconv.Quote(s[:n]) + fmt.Sprintf("... (%d bytes)", len(s))
}

// MaxRequirements is how many --require options nvidia-container-cli
// configure accepts.
const MaxRequirements = 32

// ErrTooManyRequirements is matched by the error of
// nvidia-container-cli configure flags (nvcli) for more than [MaxRequirements] requirements.
var ErrTooManyRequirements = errors.New("too many requirements")
