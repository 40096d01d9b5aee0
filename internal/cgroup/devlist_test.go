package cgroup

import (
	"fmt"
	"strconv"
	"testing"

	devconfig "github.com/opencontainers/cgroups/devices/config"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseDevicesList(t *testing.T) {
	for _, tc := range []struct {
		in       string
		allowAll bool
		rules    []string // CgroupString of each rule
		wantErr  bool
	}{
		{"a *:* rwm\n", true, nil, false},
		{"c 1:3 rwm\nc *:* m\nb *:* m\nc 136:* rwm\n", false, []string{"c 1:3 rwm", "c *:* m", "b *:* m", "c 136:* rwm"}, false},
		{"", false, nil, false},
		{"c 1:3\n", false, nil, true},
		{"x 1:3 r\n", false, nil, true},
		{"c 1-3 r\n", false, nil, true},
		{"c -1:3 r\n", false, nil, true},
		{"c 1:3 rx\n", false, nil, true},
		{"c 1:3 rr\n", false, nil, true},
		{"cc 1:3 r\n", false, nil, true},
	} {
		t.Run(strconv.Quote(tc.in), func(t *testing.T) {
			l, err := parseDevicesList([]byte(tc.in))
			if tc.wantErr {
				require.ErrorIs(t, err, ErrInvalid, "%q", tc.in)
				return
			}
			require.NoError(t, err, "%q", tc.in)
			var got []string
			for _, r := range l.rules {
				got = append(got, r.CgroupString())
			}
			assert.Equal(t, tc.allowAll, l.allowAll, "%q: allowAll", tc.in)
			assert.Equal(t, tc.rules, got, "%q: rules", tc.in)
		})
	}
}

// TestMissing follows the kernel's rule: one exception must cover the whole
// access asked for, and an allow write merges into the exact entry.
func TestMissing(t *testing.T) {
	for _, tc := range []struct {
		list string
		rule Rule
		want devconfig.Permissions
	}{
		{"a *:* rwm\n", Rule{Major: 195, Minor: 255}, ""},
		{"", Rule{Major: 195, Minor: 255}, "rw"},
		{"c 195:255 rwm\n", Rule{Major: 195, Minor: 255}, ""},
		{"c 195:* rw\n", Rule{Major: 195, Minor: 255}, ""},
		{"c *:* m\n", Rule{Major: 195, Minor: 255, Access: "m"}, ""},
		{"c *:* m\n", Rule{Major: 195, Minor: 255}, "rw"},
		{"c 195:255 r\n", Rule{Major: 195, Minor: 255}, "w"},
		{"c 195:* r\nc 195:255 w\n", Rule{Major: 195, Minor: 255}, "r"},
		{"b 195:255 rw\n", Rule{Major: 195, Minor: 255}, "rw"},
		{"c 195:254 rw\nc 196:255 rw\n", Rule{Major: 195, Minor: 255}, "rw"},
		{"b 8:* rw\n", Rule{Type: 'b', Major: 8, Minor: 1, Access: "r"}, ""},
	} {
		t.Run(fmt.Sprintf("%q/%s", tc.list, tc.rule), func(t *testing.T) {
			l, err := parseDevicesList([]byte(tc.list))
			require.NoError(t, err)
			r, err := tc.rule.normalize()
			require.NoError(t, err)
			assert.Equal(t, tc.want, l.missing(r.oci()), "list %q, rule %s: missing", tc.list, tc.rule)
		})
	}
}

// FuzzParseDevicesList: no panic, and every parsed rule formats to a line
// that parses back to it.
func FuzzParseDevicesList(f *testing.F) {
	f.Add("c 1:3 rwm\nc *:* m\nb *:* m\n")
	f.Add("a *:* rwm\n")
	f.Fuzz(func(t *testing.T, in string) {
		l, err := parseDevicesList([]byte(in))
		if err != nil {
			return
		}
		for _, r := range l.rules {
			back, err := parseListLine(r.CgroupString())
			if assert.NoError(t, err, "rule %+v formats as %q", r, r.CgroupString()) {
				assert.Equal(t, r, back, "rule %+v formats as %q", r, r.CgroupString())
			}
		}
	})
}
