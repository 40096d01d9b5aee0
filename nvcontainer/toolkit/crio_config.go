package toolkit

import (
	"errors"
)

// DefaultCRIODropIn is the drop-in file `runtime configure --runtime=crio`
// writes: CRI-O reads every file of /etc/crio/crio.conf.d after crio.conf,
// in name order, so 99- comes last and the user's crio.conf is untouched.
const DefaultCRIODropIn = "/etc/crio/crio.conf.d/99-nvidia.toml"

// CRIORuntime is what `nvidia-ctk runtime configure --runtime=crio`
// registers in a CRI-O config file.
type CRIORuntime struct {
	// Name is the runtime's name (the CRI runtime handler); empty means
	// [DockerRuntimeName].
	Name string
	// Path is the runtime program (runtime_path); empty means
	// [DefaultRuntimePath].
	Path string
	// SetAsDefault makes it crio.runtime.default_runtime.
	SetAsDefault bool
}

// ErrCRIOConfig is returned for a CRI-O config that is not TOML or has a
// value where a table is expected on the path to the runtime.
var ErrCRIOConfig = errors.New("invalid cri-o config")

// ConfigureCRIO returns the CRI-O config (data: a drop-in or crio.conf;
// empty means a new file) with crio.runtime.runtimes.NAME's runtime_path
// set to Path and runtime_type to "oci" (an existing entry's other keys,
// such as monitor_path, are kept), and crio.runtime.default_runtime with
// SetAsDefault. Every other key is kept; comments are not. CRI-O 1.23 and
// later always have CDI on, so there is no CDI switch. Keys are written
// sorted: a second run changes nothing.
func ConfigureCRIO(data []byte, rt CRIORuntime) ([]byte, error) {
	if rt.Name == "" {
		rt.Name = DockerRuntimeName
	}
	if rt.Path == "" {
		rt.Path = DefaultRuntimePath
	}
	top, err := decodeTOML(data, ErrCRIOConfig)
	if err != nil {
		return nil, err
	}
	runtime, err := subTable(top, ErrCRIOConfig, "crio", "runtime")
	if err != nil {
		return nil, err
	}
	entry, err := subTable(runtime, ErrCRIOConfig, "runtimes", rt.Name)
	if err != nil {
		return nil, err
	}
	entry["runtime_path"] = rt.Path
	entry["runtime_type"] = "oci"
	if rt.SetAsDefault {
		runtime["default_runtime"] = rt.Name
	}
	return encodeTOML(top)
}
