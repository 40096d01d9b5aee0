package requirement_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/go-nvc/nvc/nvcontainer/requirement"
)

// FuzzRequirement: no panic; errors are of the two kinds and locate the
// bad term; a requirement requirement.Validate accepts is never invalid
// against well-formed host facts.
func FuzzRequirement(f *testing.F) {
	for _, s := range []string{"cuda>=12.4 brand=tesla,driver>=470,driver<471", "", "cuda!12", "arch>=8.0", "brand=x,,", " cuda>=13 ,,,", "==", "driver>.5"} {
		f.Add(s, uint16(12), uint16(4), uint16(550), "Tesla", true)
	}
	f.Fuzz(func(t *testing.T, expr string, major, minor, drv uint16, brand string, withDevice bool) {
		facts := requirement.Facts{
			CUDAVersion:   fmt.Sprintf("%d.%d", major, minor),
			DriverVersion: fmt.Sprintf("%d.%d.%d", drv, minor, major),
		}
		if withDevice {
			facts.Devices = []requirement.Device{{Arch: fmt.Sprintf("%d.%d", minor%10, major%10), Brand: brand}}
		}
		err := requirement.Check([]string{expr}, facts)
		var ue *requirement.UnsatisfiedError
		var ie *requirement.InvalidError
		switch {
		case err == nil:
		case errors.As(err, &ue):
			first, _, _ := strings.Cut(expr, " ")
			if ue.Requirement != expr || !strings.HasPrefix(err.Error(), "unsatisfied condition: "+first) {
				t.Fatalf("CheckRequirements(%q): %v", expr, err)
			}
		case errors.As(err, &ie):
			if ie.Requirement != expr || ie.Offset < 0 || ie.Offset+len(ie.Term) > len(expr) || expr[ie.Offset:ie.Offset+len(ie.Term)] != ie.Term {
				t.Fatalf("CheckRequirements(%q): bad location %+v", expr, ie)
			}
			if requirement.Validate(expr) == nil {
				t.Fatalf("ValidateRequirement(%q) accepted what requirement.Check calls invalid: %v", expr, err)
			}
		default:
			t.Fatalf("CheckRequirements(%q): unexpected error %v", expr, err)
		}
	})
}
