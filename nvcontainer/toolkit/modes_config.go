package toolkit

import (
	"encoding/json"
	"fmt"

	"github.com/opencontainers/runtime-spec/specs-go"
)

// editedMembers are the members of config.json that CDI edits change.
var editedMembers = []string{"process", "mounts", "hooks", "linux"}

// EditSpec decodes configJSON, lets edit change it, and when edit reports
// a change writes back the members CDI edits touch (process, mounts,
// hooks, linux) over the document; every other top-level member,
// including ones this module's runtime-spec version does not know, is
// kept as it was. Members are written back in sorted order.
func EditSpec(configJSON []byte, edit func(*specs.Spec) (bool, error)) ([]byte, bool, error) {
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(configJSON, &doc); err != nil {
		return nil, false, fmt.Errorf("editing runtime spec: %w", err)
	}
	var spec specs.Spec
	if err := json.Unmarshal(configJSON, &spec); err != nil {
		return nil, false, fmt.Errorf("editing runtime spec: %w", err)
	}
	changed, err := edit(&spec)
	if err != nil || !changed {
		return configJSON, false, err
	}
	full, err := json.Marshal(&spec)
	if err != nil {
		return nil, false, fmt.Errorf("editing runtime spec: %w", err)
	}
	var edited map[string]json.RawMessage
	if err := json.Unmarshal(full, &edited); err != nil {
		return nil, false, fmt.Errorf("editing runtime spec: %w", err)
	}
	for _, k := range editedMembers {
		if v, ok := edited[k]; ok {
			doc[k] = v
		}
	}
	out, err := json.MarshalIndent(doc, "", "\t")
	return out, err == nil, err
}
