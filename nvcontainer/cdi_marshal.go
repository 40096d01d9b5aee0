package nvcontainer

import (
	"fmt"

	"go.yaml.in/yaml/v3"
	specs "tags.cncf.io/container-device-interface/specs-go"
)

// The encodings MarshalCDISpec writes.
const (
	CDIFormatJSON = "json"
	CDIFormatYAML = "yaml"
)

// MarshalCDISpec encodes spec as format, CDIFormatJSON (indented, with a
// final newline) or CDIFormatYAML (as the CDI module writes YAML, after a
// "---" line). Both are what a runtime reads from /etc/cdi or /var/run/cdi.
func MarshalCDISpec(spec *specs.Spec, format string) ([]byte, error) {
	switch format {
	case CDIFormatJSON:
		b, err := indentJSON(spec)
		if err != nil {
			return nil, fmt.Errorf("encoding CDI spec as JSON: %w", err)
		}
		return b, nil
	case CDIFormatYAML:
		b, err := yaml.Marshal(spec)
		if err != nil {
			return nil, fmt.Errorf("encoding CDI spec as YAML: %w", err)
		}
		return append([]byte("---\n"), b...), nil
	}
	return nil, fmt.Errorf("encoding CDI spec: unknown format %q (want json or yaml)", format)
}
