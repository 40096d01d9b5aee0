package nvcontainer

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// JSON returns the plan in its documented JSON layout (see the package
// documentation, "The plan as JSON"), indented by two spaces, with a final
// newline and without HTML escaping ("cuda>=12.4", not "cuda\u003e=12.4"):
// what a dry run prints. Two plans that are equal give equal bytes.
func (p *Plan) JSON() ([]byte, error) {
	b, err := indentJSON(p)
	if err != nil {
		return nil, fmt.Errorf("encoding plan: %w", err)
	}
	return b, nil
}

// indentJSON encodes v indented by two spaces, with a final newline and
// without HTML escaping: the layout of a plan in JSON (cdispec.Marshal
// writes CDI specs the same way).
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

// ParsePlan reads what JSON wrote (a dry run's output, a plan handed from
// one process to another). It refuses a layout version other than
// PlanVersion and ignores fields it does not know, which a later release
// may add within the same version.
func ParsePlan(data []byte) (*Plan, error) {
	var p Plan
	if err := json.Unmarshal(data, &p); err != nil {
		return nil, fmt.Errorf("parsing plan: %w", err)
	}
	if p.Version != PlanVersion {
		return nil, fmt.Errorf("parsing plan: layout version %d, want %d", p.Version, PlanVersion)
	}
	return &p, nil
}
