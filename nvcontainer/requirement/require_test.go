package requirement_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/go-nvc/nvc/nvcontainer/requirement"
)

// tesla is a host with one A100-like GPU: CUDA 12.4, driver 550.54.15.
var tesla = requirement.Facts{
	CUDAVersion:   "12.4",
	DriverVersion: "550.54.15",
	Devices:       []requirement.Device{{Arch: "8.0", Brand: "Tesla"}},
}

// outcome of one evaluation.
const (
	pass    = "pass"
	fail    = "unsatisfied"
	invalid = "invalid"
)

func outcome(err error) string {
	switch {
	case err == nil:
		return pass
	case errors.Is(err, requirement.ErrUnsatisfied):
		return fail
	case errors.Is(err, requirement.ErrInvalid):
		return invalid
	}
	return "other: " + err.Error()
}

// TestRequirementDSL walks libnvidia-container's requirement language
// (src/cli/dsl.c); each case names the rule it checks.
func TestRequirementDSL(t *testing.T) {
	// "driver >= 6000.0.0…" formats to 128 bytes: too long for dsl.c's buffer.
	long := "driver>=6000" + strings.Repeat(".0", 57)
	tests := []struct {
		rule string
		expr string
		want string
	}{
		// Grammar: space = OR, comma = AND, empty tokens skipped.
		{"single term true", "cuda>=12.0", pass},
		{"single term false", "cuda>=12.8", fail},
		{"comma ANDs terms: both true", "cuda>=12.0,driver>=550", pass},
		{"comma ANDs terms: one false", "cuda>=12.0,driver>=560", fail},
		{"space ORs clauses: second true", "cuda>=13 driver>=550", pass},
		{"space ORs clauses: none true", "cuda>=13 driver>=560", fail},
		{"empty comma tokens skipped", ",,cuda>=12.0,,driver>=550,", pass},
		{"runs of spaces skipped", "  cuda>=13   driver>=550  ", pass},
		{"empty predicate is satisfied", "", pass},
		{"blank predicate is satisfied", "   ", pass},
		// Operators, and the strncmp quirk.
		{"= equal", "driver=550.54.15", pass},
		{"!= not equal", "driver!=550.54.15", fail},
		{"< less", "cuda<12.5", pass},
		{"<= less or equal", "cuda<=12.4", pass},
		{"> greater", "cuda>12.4", fail},
		{">= greater or equal", "cuda>=12.4", pass},
		{"quirk: a lone ! means !=", "cuda!12.4", fail},
		{"quirk: a lone ! means != (true case)", "cuda!12.3", pass},
		{"== is invalid", "cuda==12.4", invalid},
		{"=< is invalid", "cuda=<12.4", invalid},
		{"<> is invalid", "cuda<>12.4", invalid},
		// Malformed terms.
		{"no operator", "cuda", invalid},
		{"no key", ">=12.4", invalid},
		{"no value", "cuda>=", invalid},
		{"unknown key", "memory>=80", invalid},
		// Keys are case-insensitive.
		{"key case-insensitive CUDA", "CUDA>=12.0", pass},
		{"key case-insensitive Brand", "Brand=tesla", pass},
		// Versions: digits and dots only, numeric, trailing .0 ignored.
		{"12 is not 12.4", "cuda=12", fail},
		{"trailing .0 ignored", "driver=550.54.15.0.0", pass},
		{"trailing dots ignored", "driver=550.54.15..", pass},
		{"dot runs skipped", "driver=550..54.15", pass},
		{"components compared numerically: 54 > 9", "driver>550.9", pass},
		{"components compared numerically: 15 < 100", "driver<550.54.100", pass},
		{"shorter is smaller when the rest is non-zero", "driver<550.54.15.1", pass},
		{"letters in the value are invalid", "cuda>=12.x", invalid},
		{"sign in the value is invalid", "cuda>=+12", invalid},
		{"leading dot is invalid", "cuda>=.5", invalid},
		{"component at UINTMAX_MAX is invalid", "cuda>=18446744073709551615", invalid},
		{"component overflowing is invalid", "cuda>=99999999999999999999", invalid},
		// Device keys, evaluated against the selected device.
		{"arch compared as a version", "arch>=7.0", pass},
		{"arch false", "arch>=9.0", fail},
		{"brand =, case-insensitive", "brand=TESLA", pass},
		{"brand !=", "brand!=tesla", fail},
		{"brand takes only = and !=", "brand>=tesla", invalid},
		// The documented example.
		{"example: first clause true", "cuda>=12.4 brand=tesla,driver>=470,driver<471 brand=nvidia,driver>=535,driver<536", pass},
		{"example: only the second clause could hold", "cuda>=12.8 brand=tesla,driver>=550,driver<551", pass},
		// Laziness: dsl.c stops early, so later garbage is not seen.
		{"lazy: terms after a false one unparsed", "cuda>=13,garbage cuda>=12", pass},
		{"lazy: clauses after a true one unparsed", "cuda>=12 garbage", pass},
		{"lazy: garbage reached is invalid", "cuda>=13 garbage", invalid},
		// A clause of only commas keeps the previous result.
		{"empty clause after a false one fails", "cuda>=13 ,,,", fail},
		{"empty clause first passes", ",,, cuda>=13", pass},
		// The 128-byte error buffer.
		{"false term of 128 bytes is invalid", long, invalid},
		{"true term of 128 bytes is fine", "driver<600" + strings.Repeat(".0", 58), pass},
		{"false term of 127 bytes is unsatisfied", long[:len(long)-1], fail},
	}
	for _, tt := range tests {
		t.Run(tt.rule, func(t *testing.T) {
			err := requirement.Check([]string{tt.expr}, tesla)
			if got := outcome(err); got != tt.want {
				t.Errorf("CheckRequirements(%q) = %s (%v), want %s", tt.expr, got, err, tt.want)
			}
		})
	}
}

// Version comparison: numeric, component-wise, trailing zeros ignored, as libnvidia-container compares.
func TestRequirementVersions(t *testing.T) {
	tests := []struct{ host, expr, want string }{
		{"12.0", "cuda=12", pass},
		{"12", "cuda=12.0.0", pass},
		{"12", "cuda>=12.0", pass},
		{"12", "cuda<12.0.1", pass},
		{"1.10", "cuda>1.9", pass},
		{"1.9", "cuda<1.10", pass},
		{"12.0", "cuda!=12", fail},
		{"12.0", "cuda>12", fail},
		{"12.0", "cuda<=12", pass},
		{"12.01", "cuda=12.1", pass},
	}
	for _, tt := range tests {
		err := requirement.Check([]string{tt.expr}, requirement.Facts{CUDAVersion: tt.host})
		if got := outcome(err); got != tt.want {
			t.Errorf("CUDA %s, %q = %s (%v), want %s", tt.host, tt.expr, got, err, tt.want)
		}
	}
}

// Unknown facts: a term on a fact the host does not know is false, and the
// error names the fact and why it is unknown; arch and brand still pass
// when no device is selected (dsl.c's rule for that case only).
func TestRequirementUnknownFacts(t *testing.T) {
	const why = "NVML unavailable: no libnvidia-ml.so.1"
	none := requirement.Facts{UnknownReason: why}
	noNVML := requirement.Facts{DriverVersion: "550.54.15", UnknownReason: why, Devices: []requirement.Device{{}}}
	noBrand := requirement.Facts{Devices: []requirement.Device{{Arch: "8.0"}}}
	tests := []struct {
		rule  string
		facts requirement.Facts
		expr  string
		want  string // outcome, or the unknown fact's name for a failure it caused
	}{
		{"cuda without a CUDA version", none, "cuda>=99.0", "CUDA version"},
		{"cuda without a CUDA version, with a device", noNVML, "cuda>=1.0", "CUDA version"},
		{"driver without a driver version", none, "driver>=1", "driver version"},
		{"arch of a device without compute capability", noNVML, "arch>=9.9", "device compute capability"},
		{"arch of a device without compute capability, <", noNVML, "arch<99", "device compute capability"},
		{"brand of a device without brand", noNVML, "brand=geforce", "device brand"},
		{"brand != of a device without brand", noNVML, "brand!=geforce", "device brand"},
		{"brand of a device without brand, no reason given", noBrand, "brand=tesla", "device brand"},
		{"no device: arch passes", none, "arch>=99", pass},
		{"no device: brand passes, even with <", none, "brand<x", pass},
		{"a known fact in another clause holds", noNVML, "cuda>=12.0 driver>=550", pass},
		{"a known fact in another clause fails", noNVML, "brand=tesla driver>=560", "device brand"},
		{"the value is still checked", noNVML, "cuda>=abc", invalid},
		{"terms after an unknown one are still checked", noNVML, "cuda>=12.0,foo>=1", invalid},
		{"a known true term does not make up for an unknown one", noNVML, "cuda>=12.0,driver>=550", "CUDA version"},
		{"a known false term decides, whatever the unknown", noNVML, "cuda>=12.0,driver>=560", fail},
		{"laziness after a known false term stays", noNVML, "driver>=560,foo>=1", fail},
		{"brand operators are still checked", noNVML, "brand<x", invalid},
		{"unknown key fails even with no facts", none, "foo=1", invalid},
		{"host version with letters is invalid", requirement.Facts{DriverVersion: "550.54.15-beta"}, "driver>=1", invalid},
		{"a known arch is still compared", noBrand, "arch>=9.0", fail},
	}
	for _, tt := range tests {
		t.Run(tt.rule, func(t *testing.T) {
			err := requirement.Check([]string{tt.expr}, tt.facts)
			var ue *requirement.UnsatisfiedError
			switch got := outcome(err); {
			case tt.want == pass || tt.want == fail || tt.want == invalid:
				if got != tt.want || (got == fail && errors.Is(err, requirement.ErrUnknownFact)) {
					t.Errorf("CheckRequirements(%q) = %s (%v), want %s", tt.expr, got, err, tt.want)
				}
			case !errors.As(err, &ue) || !errors.Is(err, requirement.ErrUnknownFact) || ue.Fact != tt.want:
				t.Errorf("CheckRequirements(%q) = %v, want a failure on the unknown %s", tt.expr, err, tt.want)
			case tt.facts.UnknownReason != "" && ue.Why != why, tt.facts.UnknownReason == "" && ue.Why != "not reported by the host":
				t.Errorf("CheckRequirements(%q): reason %q", tt.expr, ue.Why)
			}
		})
	}
}

// TestRequirementUnknownMessage: the message keeps libnvidia-container's
// start and says which term could not be checked and why, instead of the
// advice to update the driver.
func TestRequirementUnknownMessage(t *testing.T) {
	facts := requirement.Facts{DriverVersion: "550.54.15", UnknownReason: "NVML unavailable: no libnvidia-ml.so.1",
		Devices: []requirement.Device{{}}}
	for expr, want := range map[string]string{
		"cuda>=12.8":                         "unsatisfied condition: cuda>=12.8 (cannot check cuda>=12.8: CUDA version unknown: NVML unavailable: no libnvidia-ml.so.1)",
		"cuda>=12.4 brand=tesla,driver>=550": "unsatisfied condition: cuda>=12.4 (cannot check cuda>=12.4: CUDA version unknown: NVML unavailable: no libnvidia-ml.so.1)",
		"driver>=560 brand=tesla":            "unsatisfied condition: driver>=560 (cannot check brand=tesla: device brand unknown: NVML unavailable: no libnvidia-ml.so.1)",
	} {
		if err := requirement.Check([]string{expr}, facts); err == nil || err.Error() != want {
			t.Errorf("CheckRequirements(%q):\n got %v\nwant %s", expr, err, want)
		}
	}
}

// Requirements are evaluated per selected device; separate requirements are ANDed.
func TestRequirementsPerDevice(t *testing.T) {
	mixed := requirement.Facts{
		CUDAVersion: "12.4",
		Devices: []requirement.Device{
			{Arch: "8.0", Brand: "Tesla"},
			{Arch: "7.5", Brand: "GeForce"},
		},
	}
	err := requirement.Check([]string{"cuda>=12", "arch>=8.0"}, mixed)
	var ue *requirement.UnsatisfiedError
	if !errors.As(err, &ue) || ue.Device != 1 || ue.Requirement != "arch>=8.0" {
		t.Fatalf("want device 1 to fail arch>=8.0, got %v (%+v)", err, ue)
	}
	if err := requirement.Check([]string{"brand=tesla brand=geforce"}, mixed); err != nil {
		t.Errorf("OR across brands should hold on both devices: %v", err)
	}
	err = requirement.Check([]string{"cuda>=12", "cuda>=13"}, requirement.Facts{CUDAVersion: "12.4"})
	if !errors.As(err, &ue) || ue.Device != -1 || ue.Requirement != "cuda>=13" {
		t.Errorf("separate requirements are ANDed, evaluated without a device: %v (%+v)", err, ue)
	}
	if err := requirement.Check(nil, mixed); err != nil {
		t.Errorf("no requirements: %v", err)
	}
}

// The failure message is libnvidia-container's (the text nvidia-container-cli prints).
func TestRequirementMessages(t *testing.T) {
	tests := []struct{ expr, msg string }{
		{"cuda>=12.8", "unsatisfied condition: cuda>=12.8, please update your driver to a newer version, or use an earlier cuda container"},
		{"cuda>=12.8 brand=tesla,driver>=560", "unsatisfied condition: cuda>=12.8, please update your driver to a newer version, or use an earlier cuda container"},
		{"brand=geforce cuda>=13", "unsatisfied condition: brand=geforce"},
		// The message shows the first space-separated token, even when empty.
		{" cuda>=13", "unsatisfied condition: "},
		// The advice is keyed on a case-sensitive "cuda>=" prefix.
		{"CUDA>=13", "unsatisfied condition: CUDA>=13"},
		{"driver>=600", "unsatisfied condition: driver>=600"},
	}
	for _, tt := range tests {
		err := requirement.Check([]string{tt.expr}, tesla)
		if err == nil || err.Error() != tt.msg {
			t.Errorf("CheckRequirements(%q) error = %v, want %q", tt.expr, err, tt.msg)
		}
	}
}

// An invalid requirement says where it is invalid.
func TestRequirementInvalidSaysWhere(t *testing.T) {
	expr := "cuda>=13 brand=tesla,driver>=5x0"
	err := requirement.Check([]string{expr}, tesla)
	var ie *requirement.InvalidError
	if !errors.As(err, &ie) {
		t.Fatalf("want requirement.InvalidError, got %v", err)
	}
	if ie.Term != "driver>=5x0" || ie.Offset != 21 || ie.Requirement != expr {
		t.Errorf("wrong location: %+v", ie)
	}
	want := `invalid expression: term "driver>=5x0" at offset 21 of requirement "cuda>=13 brand=tesla,driver>=5x0": version "5x0" is not made of digits and dots`
	if err.Error() != want {
		t.Errorf("message:\n got %s\nwant %s", err, want)
	}
}

func TestValidateRequirement(t *testing.T) {
	valid := []string{
		"", "cuda>=12.4", "cuda>=12.4 brand=tesla,driver>=470,driver<471 brand=nvidia,driver>=535,driver<536",
		"ARCH!7.5", "brand!=GeForce", ",, ,",
	}
	for _, expr := range valid {
		if err := requirement.Validate(expr); err != nil {
			t.Errorf("ValidateRequirement(%q): %v", expr, err)
		}
	}
	invalidExprs := map[string]string{
		"cuda>=12 garbage":          "garbage",     // lazily ignored by requirement.Check, not here
		"cuda>=13,foo=1":            "foo=1",       // unknown key
		"brand<tesla":               "brand<tesla", // brand takes = and != only
		"arch>=8.x":                 "arch>=8.x",
		"driver>=.5":                "driver>=.5",
		"cuda==12":                  "cuda==12",
		"cuda>=1 driver>=" + "1234": "", // valid, checked below
	}
	for expr, term := range invalidExprs {
		err := requirement.Validate(expr)
		if term == "" {
			if err != nil {
				t.Errorf("ValidateRequirement(%q): %v", expr, err)
			}
			continue
		}
		var ie *requirement.InvalidError
		if !errors.As(err, &ie) || ie.Term != term || !errors.Is(err, requirement.ErrInvalid) {
			t.Errorf("ValidateRequirement(%q) = %v, want term %q", expr, err, term)
		}
	}
}

// TestRequirementCUDAAtLeast: with a CUDA version that is only a lower
// bound (13.3 for a driver newer than the table), a cuda term is decided
// only when every version from 13.3 up gives it the same value; otherwise
// it is unknown, naming the bound.
func TestRequirementCUDAAtLeast(t *testing.T) {
	f := requirement.Facts{CUDAVersion: "13.3", CUDAAtLeast: true, DriverVersion: "616.10"}
	for _, tc := range []struct {
		req  string
		want string // pass, fail, or unknown
	}{
		{"cuda>=12.4", "pass"},
		{"cuda>=13.3", "pass"},
		{"cuda>13.2", "pass"},
		{"cuda!=12.4", "pass"},
		{"cuda<13.3", "fail"},
		{"cuda<=13.2", "fail"},
		{"cuda=12.4", "fail"},
		{"cuda>=13.4", "unknown"},
		{"cuda>13.3", "unknown"},
		{"cuda=13.3", "unknown"},
		{"cuda=13.4", "unknown"},
		{"cuda<=13.3", "unknown"},
		{"cuda<14.0", "unknown"},
		{"cuda!=13.3", "unknown"},
		{"cuda!=14.0", "unknown"},
		{"cuda>=13.4 driver>=616", "pass"},
		{"cuda>=13.x", "invalid"},
	} {
		t.Run(tc.req, func(t *testing.T) {
			err := requirement.Check([]string{tc.req}, f)
			var ue *requirement.UnsatisfiedError
			got := "fail"
			switch {
			case err == nil:
				got = "pass"
			case errors.Is(err, requirement.ErrInvalid):
				got = "invalid"
			case errors.As(err, &ue) && ue.Fact == "CUDA version above 13.3" && errors.Is(err, requirement.ErrUnknownFact):
				got = "unknown"
			}
			if got != tc.want {
				t.Errorf("%s: %s (%v), want %s", tc.req, got, err, tc.want)
			}
			exact := f
			exact.CUDAAtLeast = false
			if err := requirement.Check([]string{tc.req}, exact); tc.want == "unknown" && errors.Is(err, requirement.ErrUnknownFact) {
				t.Errorf("%s with an exact 13.3: %v", tc.req, err)
			}
		})
	}
}
