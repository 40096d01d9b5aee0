package cgroup

import (
	"errors"
	"testing"
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
		got, err := tc.in.normalize()
		if tc.wantErr {
			if !errors.Is(err, ErrInvalid) {
				t.Errorf("%+v: error %v, want ErrInvalid", tc.in, err)
			}
			continue
		}
		if err != nil || got.String() != tc.want {
			t.Errorf("%+v: got %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
}
