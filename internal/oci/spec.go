package oci

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path"

	"github.com/opencontainers/runtime-spec/specs-go"
)

// LoadSpec reads <bundle>/config.json, at most MaxSpecSize bytes, and
// parses it with [ParseSpec].
func LoadSpec(bundle string) (*specs.Spec, error) {
	p := path.Join(bundle, "config.json")
	data, err := ReadFile(p, MaxSpecSize)
	if err != nil {
		return nil, fmt.Errorf("loading OCI spec: %w", err)
	}
	spec, err := ParseSpec(data)
	if err != nil {
		return nil, fmt.Errorf("loading OCI spec %s: %w", p, err)
	}
	return spec, nil
}

// ParseSpec parses an OCI runtime spec (config.json) as the runtime hook
// does: ociVersion, process and root must be present. A process
// capabilities given as a flat list (runtime-spec 1.0.0-rc1 to rc4) is read
// as the bounding, effective and permitted sets.
func ParseSpec(data []byte) (*specs.Spec, error) {
	flat, data, err := takeFlatCapabilities(data)
	if err != nil {
		return nil, fmt.Errorf("parsing OCI spec %s: %w", excerpt(data), err)
	}
	var spec specs.Spec
	if err := decodeJSON(data, &spec); err != nil {
		return nil, fmt.Errorf("parsing OCI spec %s: %w", excerpt(data), err)
	}
	for _, missing := range []struct {
		name string
		gone bool
	}{{"ociVersion", spec.Version == ""}, {"process", spec.Process == nil}, {"root", spec.Root == nil}} {
		if missing.gone {
			return nil, fmt.Errorf("parsing OCI spec %s: no %q", excerpt(data), missing.name)
		}
	}
	if flat != nil {
		spec.Process.Capabilities = &specs.LinuxCapabilities{Bounding: flat, Effective: flat, Permitted: flat}
	}
	return &spec, nil
}

// takeFlatCapabilities finds a pre-1.0 flat process.capabilities list; when
// there is one it returns it and data with the list removed.
func takeFlatCapabilities(data []byte) ([]string, []byte, error) {
	var probe struct {
		Process struct {
			Capabilities json.RawMessage `json:"capabilities"`
		} `json:"process"`
	}
	if json.Unmarshal(data, &probe) != nil || !bytes.HasPrefix(bytes.TrimLeft(probe.Process.Capabilities, " \t\r\n"), []byte("[")) {
		return nil, data, nil // not the old form: the full decode reports any error
	}
	flat := []string{}
	if err := json.Unmarshal(probe.Process.Capabilities, &flat); err != nil {
		return nil, data, fmt.Errorf("process.capabilities: %w", err)
	}
	var top map[string]json.RawMessage
	var proc map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		return nil, data, err
	}
	if err := json.Unmarshal(top["process"], &proc); err != nil {
		return nil, data, err
	}
	delete(proc, "capabilities")
	top["process"], _ = json.Marshal(proc)
	rest, err := json.Marshal(top)
	return flat, rest, err
}
