package devices

import (
	"os"
	"os/exec"
	"path/filepath"
)

// Where a program finds its NVML helper (examples/nvc-nvml) for
// NVMLHelperOptions.Path: see [FindNVMLHelper].
const (
	// NVMLHelperEnv names the helper's path, overriding the search.
	NVMLHelperEnv = "NVC_NVML_HELPER"
	// NVMLHelperName is the helper's file name, looked for next to the
	// running executable, then on PATH.
	NVMLHelperName = "nvc-nvml"
)

// FindNVMLHelper is where a build without cgo finds its NVML helper, as
// nvidia-container-cli, nvidia-container-runtime-hook and
// nvidia-container-runtime do: $NVC_NVML_HELPER when set, else the regular
// file nvc-nvml in the running executable's directory, else nvc-nvml on
// PATH; "" when there is none. It reads the process's environment: a hook
// must be given an explicit one (the runtime spec's hook env), never the
// container's.
func FindNVMLHelper() string {
	if p := os.Getenv(NVMLHelperEnv); p != "" {
		return p
	}
	if exe, err := os.Executable(); err == nil {
		p := filepath.Join(filepath.Dir(exe), NVMLHelperName)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
			return p
		}
	}
	if p, err := exec.LookPath(NVMLHelperName); err == nil {
		return p
	}
	return ""
}
