package toolkit

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/BurntSushi/toml"
)

// DefaultContainerdConfig is containerd's configuration file.
const DefaultContainerdConfig = "/etc/containerd/config.toml"

// ContainerdRuntimeType is the shim containerd runs the nvidia runtime with.
const ContainerdRuntimeType = "io.containerd.runc.v2"

// ContainerdRuntime is what `nvidia-ctk runtime configure
// --runtime=containerd` registers in containerd's config.toml.
type ContainerdRuntime struct {
	// Name is the runtime's name (the CRI runtime handler); empty means
	// [DockerRuntimeName].
	Name string
	// Path is the runtime program (options.BinaryName); empty means
	// [DefaultRuntimePath].
	Path string
	// SetAsDefault makes it the CRI plugin's default_runtime_name.
	SetAsDefault bool
	// CDIEnabled turns on the CRI plugin's enable_cdi.
	CDIEnabled bool
}

// ErrContainerdConfig is returned for a config.toml that is not TOML, has
// a version containerd does not know, or has a table where a value is
// expected (or the reverse) on the path to the runtime.
var ErrContainerdConfig = errors.New("invalid containerd config")

// containerdSchema is where the CRI plugin's runtimes are in one version
// of containerd's config: cri is the plugin's table under plugins.
type containerdSchema struct{ cri string }

var containerdSchemas = map[int64]containerdSchema{
	1: {cri: "cri"},                          // containerd 1.0 to 1.7, version absent or 1
	2: {cri: "io.containerd.grpc.v1.cri"},    // containerd 1.3 to 1.7
	3: {cri: "io.containerd.cri.v1.runtime"}, // containerd 2.0 and later
}

// ConfigureContainerd returns config.toml (data; empty or only white space
// means a new version 2 config, as containerd 1.6 writes) with the runtime
// registered in the CRI plugin of the config's schema: version 2's
// plugins."io.containerd.grpc.v1.cri".containerd.runtimes.NAME, version
// 3's plugins."io.containerd.cri.v1.runtime".containerd.runtimes.NAME,
// version 1's (no version key) plugins.cri.containerd.runtimes.NAME. A new
// entry starts as a copy of the runc runtime's (SystemdCgroup and the like
// carry over), then runtime_type is set to [ContainerdRuntimeType] and
// options.BinaryName to Path; an existing entry keeps its other keys.
// Every other key of the file is kept with its value; comments are not
// (TOML decoders drop them). Keys are written sorted, so the output of
// the same input is always the same and a second run changes nothing.
func ConfigureContainerd(data []byte, rt ContainerdRuntime) ([]byte, error) {
	if rt.Name == "" {
		rt.Name = DockerRuntimeName
	}
	if rt.Path == "" {
		rt.Path = DefaultRuntimePath
	}
	top, err := decodeTOML(data, ErrContainerdConfig)
	if err != nil {
		return nil, err
	}
	if len(top) == 0 {
		top["version"] = int64(2)
	}
	version := int64(1)
	if v, ok := top["version"]; ok {
		if version, ok = v.(int64); !ok {
			return nil, fmt.Errorf("%w: version %v is not an integer", ErrContainerdConfig, v)
		}
	}
	schema, ok := containerdSchemas[version]
	if !ok {
		return nil, fmt.Errorf("%w: unsupported version %d (want 1, 2 or 3)", ErrContainerdConfig, version)
	}
	cri, err := subTable(top, ErrContainerdConfig, "plugins", schema.cri)
	if err != nil {
		return nil, err
	}
	containerd, err := subTable(cri, ErrContainerdConfig, "containerd")
	if err != nil {
		return nil, err
	}
	runtimes, err := subTable(containerd, ErrContainerdConfig, "runtimes")
	if err != nil {
		return nil, err
	}
	if _, ok := runtimes[rt.Name]; !ok {
		if runc, ok := runtimes["runc"].(map[string]any); ok {
			runtimes[rt.Name] = deepCopyTable(runc)
		}
	}
	entry, err := subTable(runtimes, ErrContainerdConfig, rt.Name)
	if err != nil {
		return nil, err
	}
	entry["runtime_type"] = ContainerdRuntimeType
	options, err := subTable(entry, ErrContainerdConfig, "options")
	if err != nil {
		return nil, err
	}
	options["BinaryName"] = rt.Path
	if rt.SetAsDefault {
		containerd["default_runtime_name"] = rt.Name
	}
	if rt.CDIEnabled {
		cri["enable_cdi"] = true
	}
	return encodeTOML(top)
}

// decodeTOML decodes a TOML document into nested maps; nil, empty or
// white space is an empty table.
func decodeTOML(data []byte, kind error) (map[string]any, error) {
	top := map[string]any{}
	if len(bytes.TrimSpace(data)) == 0 {
		return top, nil
	}
	if _, err := toml.Decode(string(data), &top); err != nil {
		return nil, fmt.Errorf("%w: %w", kind, err)
	}
	return top, nil
}

// subTable returns the table at path under t, creating the missing ones;
// a value on the path that is not a table is an error naming the path.
func subTable(t map[string]any, kind error, path ...string) (map[string]any, error) {
	for i, key := range path {
		v, ok := t[key]
		if !ok {
			v = map[string]any{}
			t[key] = v
		}
		next, ok := v.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%w: %q is a %T, not a table", kind, path[:i+1], v)
		}
		t = next
	}
	return t, nil
}

// deepCopyTable copies a decoded table so that editing the copy leaves the
// original alone.
func deepCopyTable(t map[string]any) map[string]any {
	c := make(map[string]any, len(t))
	for k, v := range t {
		c[k] = deepCopyValue(v)
	}
	return c
}

func deepCopyValue(v any) any {
	switch v := v.(type) {
	case map[string]any:
		return deepCopyTable(v)
	case []map[string]any:
		c := make([]map[string]any, len(v))
		for i, t := range v {
			c[i] = deepCopyTable(t)
		}
		return c
	case []any:
		c := make([]any, len(v))
		for i, e := range v {
			c[i] = deepCopyValue(e)
		}
		return c
	}
	return v
}

// encodeTOML writes the table with keys sorted, sub-tables after a
// table's values, indented by two spaces per level.
func encodeTOML(top map[string]any) ([]byte, error) {
	var out bytes.Buffer
	enc := toml.NewEncoder(&out)
	enc.Indent = "  "
	if err := enc.Encode(top); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}
