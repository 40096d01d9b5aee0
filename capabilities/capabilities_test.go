package capabilities_test

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/go-nvc/nvc/capabilities"
)

func TestParse(t *testing.T) {
	c := capabilities.Of
	tests := []struct {
		name string
		in   string
		want capabilities.Set
	}{
		{"two classes", "compute,utility", c(capabilities.Compute, capabilities.Utility)},
		{"order does not matter", "utility,compute", c(capabilities.Compute, capabilities.Utility)},
		{"items trimmed, empty items skipped", " video , ,ngx,", c(capabilities.Video, capabilities.NGX)},
		{"duplicates collapse", "graphics,graphics", c(capabilities.Graphics)},
		{"all", "all", capabilities.All},
		{"all with others", "compute,all", capabilities.All},
		{"every name", "compat32,compute,display,graphics,ngx,utility,video", capabilities.All},
		// Empty or unset means utility (libnvidia-container's documented default).
		{"empty means default", "", capabilities.Default},
		{"blank means default", " , ,", capabilities.Default},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := capabilities.Parse(tt.in)
			if err != nil {
				t.Fatalf("Parse(%q): %v", tt.in, err)
			}
			if got != tt.want {
				t.Errorf("Parse(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestParseUnknown(t *testing.T) {
	tests := []struct{ in, msg string }{
		{"compute,foo", `parsing driver capabilities "compute,foo": unknown capability "foo"`},
		// The hook rejects "none"; so do we.
		{"none", `parsing driver capabilities "none": unknown capability "none"`},
		// Names are case-sensitive, as in the hook.
		{"Compute", `parsing driver capabilities "Compute": unknown capability "Compute"`},
		// "all" does not excuse an unknown word here (nvcontainer applies the hook's laxer rule).
		{"all, bogus ", `parsing driver capabilities "all, bogus ": unknown capability "bogus"`},
	}
	for _, tt := range tests {
		_, err := capabilities.Parse(tt.in)
		if err == nil {
			t.Fatalf("Parse(%q) succeeded", tt.in)
		}
		if err.Error() != tt.msg {
			t.Errorf("Parse(%q) error = %q, want %q", tt.in, err, tt.msg)
		}
		if !errors.Is(err, capabilities.ErrUnknown) {
			t.Errorf("Parse(%q) error does not match ErrUnknown", tt.in)
		}
	}
}

func TestString(t *testing.T) {
	tests := []struct {
		set  capabilities.Set
		want string
	}{
		{0, ""},
		{capabilities.Default, "utility"},
		{capabilities.HookDefault, "compute,utility"},
		// Canonical order is alphabetical: the toolkit's default supported-driver-capabilities.
		{capabilities.All, "compat32,compute,display,graphics,ngx,utility,video"},
		{capabilities.Of(capabilities.Video, capabilities.Compat32), "compat32,video"},
	}
	for _, tt := range tests {
		if got := tt.set.String(); got != tt.want {
			t.Errorf("Set(%#x).String() = %q, want %q", uint8(tt.set), got, tt.want)
		}
	}
}

func TestRoundTrip(t *testing.T) {
	for s := capabilities.Set(1); s <= capabilities.All; s++ {
		got, err := capabilities.Parse(s.String())
		if err != nil || got != s {
			t.Fatalf("Parse(%q) = %v, %v; want %v", s.String(), got, err, s)
		}
	}
}

func TestCapabilityString(t *testing.T) {
	for _, c := range capabilities.All.List() {
		got, err := capabilities.ParseCapability(c.String())
		if err != nil || got != c {
			t.Errorf("ParseCapability(%q) = %v, %v", c.String(), got, err)
		}
	}
	if got := capabilities.Capability(0x3).String(); got != "capability(0x3)" {
		t.Errorf("two-bit value prints %q", got)
	}
	if got := capabilities.Capability(0x80).String(); got != "capability(0x80)" {
		t.Errorf("out-of-range bit prints %q", got)
	}
}

func TestSetOperations(t *testing.T) {
	cu := capabilities.Of(capabilities.Compute, capabilities.Utility)
	if !cu.Has(capabilities.Compute) || cu.Has(capabilities.Video) || cu.Has(0) {
		t.Errorf("Has on %v is wrong", cu)
	}
	if got := cu.Intersect(capabilities.Of(capabilities.Utility, capabilities.Video)); got != capabilities.Default {
		t.Errorf("Intersect = %v", got)
	}
	if got := cu.Union(capabilities.Of(capabilities.NGX)).String(); got != "compute,ngx,utility" {
		t.Errorf("Union = %v", got)
	}
	if got := cu.Minus(capabilities.Default); got != capabilities.Of(capabilities.Compute) {
		t.Errorf("Minus = %v", got)
	}
	if !cu.SubsetOf(capabilities.All) || capabilities.All.SubsetOf(cu) {
		t.Errorf("SubsetOf is wrong")
	}
	if cu.Len() != 2 || capabilities.All.Len() != 7 {
		t.Errorf("Len is wrong")
	}
}

// libnvidia-container: --video also sets COMPUTE_LIBS, --display also sets
// GRAPHICS_LIBS (libnvidia-container's --help text and its library lists).
func TestExpand(t *testing.T) {
	tests := []struct{ in, want string }{
		{"video", "compute,video"},
		{"display", "display,graphics"},
		{"video,display,utility", "compute,display,graphics,utility,video"},
		{"compute,utility", "compute,utility"},
		{"ngx,compat32", "compat32,ngx"},
	}
	for _, tt := range tests {
		s, err := capabilities.Parse(tt.in)
		if err != nil {
			t.Fatal(err)
		}
		if got := s.Expand().String(); got != tt.want {
			t.Errorf("Parse(%q).Expand() = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestJSON(t *testing.T) {
	type doc struct {
		Caps capabilities.Set `json:"caps"`
	}
	for _, s := range []capabilities.Set{0, capabilities.Default, capabilities.All} {
		b, err := json.Marshal(doc{s})
		if err != nil {
			t.Fatal(err)
		}
		var back doc
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatalf("Unmarshal(%s): %v", b, err)
		}
		if back.Caps != s {
			t.Errorf("round trip of %s gave %v", b, back.Caps)
		}
	}
	var d doc
	if err := json.Unmarshal([]byte(`{"caps":"compute,foo"}`), &d); !errors.Is(err, capabilities.ErrUnknown) {
		t.Errorf("bad JSON value: err = %v", err)
	}
}
