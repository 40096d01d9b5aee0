package capabilities_test

import (
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

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
			require.Zero(t, s, "Parse(%q) returned a set with error %v", in, err)
			require.ErrorIs(t, err, capabilities.ErrUnknown, "Parse(%q)", in)
			require.ErrorContains(t, err, strconv.Quote(in), "Parse(%q) error does not name the input", in)
			return
		}
		require.NotZero(t, s, "Parse(%q)", in)
		require.True(t, s.SubsetOf(capabilities.All), "Parse(%q) = %#x", in, uint8(s))
		back, err := capabilities.Parse(s.String())
		require.NoError(t, err, "Parse(%q).String() = %q does not parse back", in, s.String())
		require.Equal(t, s, back, "Parse(%q).String() = %q does not parse back", in, s.String())
	})
}
