package cdihook

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
	// HostDriverVersion is the host driver's version, "550.54.15".
	HostDriverVersion string
	// HostCUDAVersion is the CUDA version the host driver supports
	// ("12.4"), compared with the CUDA version of the library's note
	// when no HostDriverVersion is given. With HostDriverVersion empty
	// too, compat is not considered and nothing is changed.
	HostCUDAVersion string
	// CompatDir is the compat directory in the container. Empty:
	// [CompatDir].
	CompatDir string
}

// CUDACompatResult says what [EnableCUDACompat] found and did.
type CUDACompatResult struct {
	// Libraries are the libcuda.so.*.* regular files found in the
	// compat dir, by name; the search stops at two.
	Libraries []string
	// Note is the .note.cuda.fwd_compatibility ELF note of the one
	// library; nil when there is none (or not exactly one library).
	Note *CompatNote
	// Enabled reports whether [CompatConf] now names the compat dir.
	Enabled bool
	// Reason says why compat is not enabled; empty when Enabled.
	Reason string
	// Removed names the stale entries removed from /etc/ld.so.conf.d.
	Removed []string
}
