package cdihook

import (
	"fmt"
	"strconv"
	"strings"
)

// Where CUDA forward compatibility lives in an image, and where
// [EnableCUDACompat] says so.
const (
	// CompatDir is the image's CUDA forward-compatibility directory.
	CompatDir = "/usr/local/cuda/compat"
	// CompatConf is the one file in /etc/ld.so.conf.d that
	// [EnableCUDACompat] writes: the same name on every run, so that runs
	// on the same writable layer replace it rather than add another.
	CompatConf = "/etc/ld.so.conf.d/00-compat-nvidia-cdi-hook.conf"
)

const (
	compatLibGlob   = "libcuda.so.*.*"
	ldsoconfDir     = "/etc/ld.so.conf.d"
	compatConfGlob  = "00-compat-*.conf"
	maxCompatConf   = 64 << 10 // bytes read from one 00-compat-*.conf
	maxCompatConfs  = 64       // 00-compat-*.conf files read
	compatConfPerms = 0o644
)

// CUDACompatOptions are the host facts [EnableCUDACompat] compares the
// image with.
type CUDACompatOptions struct {
	// HostDriverVersion is the host driver's version, "550.54.15" (only
	// the number before the first dot counts). Empty: compat is not
	// considered and nothing is changed.
	HostDriverVersion string
}

// CUDACompatResult says what [EnableCUDACompat] found and did.
type CUDACompatResult struct {
	// Libraries are the libcuda.so.*.* regular files found in
	// [CompatDir], by name; the search stops at two.
	Libraries []string
	// Enabled reports whether [CompatConf] now names [CompatDir].
	Enabled bool
	// Reason says why compat is not enabled; empty when Enabled.
	Reason string
	// Removed names the stale entries removed from /etc/ld.so.conf.d.
	Removed []string
}

// majorVersion is the number before the first dot of v ("550.54.15").
func majorVersion(v string) (int, error) {
	s, _, _ := strings.Cut(v, ".")
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 || strings.HasPrefix(s, "+") {
		return 0, fmt.Errorf("major version %q is not a number", s)
	}
	return n, nil
}
