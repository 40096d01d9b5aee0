package cgroup

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRuleNormalize(t *testing.T) {
	for _, tc := range []struct {
		in      Rule
		want    string
		wantErr bool
	}{
		{Rule{Major: 195, Minor: 255}, "c 195:255 rw", false},
		{Rule{Type: 'b', Major: 8, Minor: 0, Access: "mwr"}, "b 8:0 rwm", false},
		{Rule{Major: 4095, Minor: 1<<20 - 1, Access: "m"}, "c 4095:1048575 m", false},
		{Rule{Type: 'a', Major: 1, Minor: 3}, "", true},
		{Rule{Type: 'p', Major: 1, Minor: 3}, "", true},
		{Rule{Major: 4096, Minor: 0}, "", true},
		{Rule{Major: 0, Minor: 1 << 20}, "", true},
		{Rule{Major: 1, Minor: 3, Access: "rx"}, "", true},
		{Rule{Major: 1, Minor: 3, Access: "rr"}, "", true},
		{Rule{Major: 1, Minor: 3, Access: "rwmr"}, "", true},
	} {
		t.Run(fmt.Sprintf("%+v", tc.in), func(t *testing.T) {
			got, err := tc.in.normalize()
			if tc.wantErr {
				assert.ErrorIs(t, err, ErrInvalid, "%+v", tc.in)
				return
			}
			require.NoError(t, err, "%+v", tc.in)
			assert.Equal(t, tc.want, got.String(), "%+v", tc.in)
		})
	}
}
