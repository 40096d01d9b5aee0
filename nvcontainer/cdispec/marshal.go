package cdispec

import (
	"bytes"
	"encoding/json"
	"fmt"

	"go.yaml.in/yaml/v3"
	specs "tags.cncf.io/container-device-interface/specs-go"
)

// The encodings Marshal writes.
const (
	FormatJSON = "json"
	FormatYAML = "yaml"
)

// Marshal encodes spec as format, FormatJSON (indented, with a
// final newline) or FormatYAML (as the CDI module writes YAML, after a
// "---" line). Both are what a runtime reads from /etc/cdi or /var/run/cdi.
func Marshal(spec *specs.Spec, format string) ([]byte, error) {
	switch format {
	case FormatJSON:
		b, err := indentJSON(spec)
		if err != nil {
			return nil, fmt.Errorf("encoding CDI spec as JSON: %w", err)
		}
		return b, nil
	case FormatYAML:
		b, err := yaml.Marshal(spec)
		if err != nil {
			return nil, fmt.Errorf("encoding CDI spec as YAML: %w", err)
		}
		return append([]byte("---\n"), b...), nil
	}
	return nil, fmt.Errorf("encoding CDI spec: unknown format %q (want json or yaml)", format)
}

// indentJSON encodes v indented by two spaces, with a final newline and
// without HTML escaping (a path keeps its < > &), as Plan.JSON does.
func indentJSON(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
