package capabilities_test

import (
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/go-nvc/nvc/capabilities"
)

// FuzzParse checks that Parse never panics, that an error names the input
// and matches ErrUnknown, and that a parsed set prints back to itself.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"", "all", "compute,utility", " video , ,ngx,", "compute,foo", "all,x", ",,,", "COMPUTE"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		s, err := capabilities.Parse(in)
		if err != nil {
			if s != 0 {
				t.Fatalf("Parse(%q) returned %v with error %v", in, s, err)
			}
			if !errors.Is(err, capabilities.ErrUnknown) || !strings.Contains(err.Error(), strconv.Quote(in)) {
				t.Fatalf("Parse(%q) error %q does not name the input", in, err)
			}
			return
		}
		if s == 0 || !s.SubsetOf(capabilities.All) {
			t.Fatalf("Parse(%q) = %#x", in, uint8(s))
		}
		back, err := capabilities.Parse(s.String())
		if err != nil || back != s {
			t.Fatalf("Parse(%q).String() = %q does not parse back: %v, %v", in, s.String(), back, err)
		}
	})
}
