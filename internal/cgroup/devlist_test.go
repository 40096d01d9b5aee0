package cgroup

import (
	"errors"
	"strings"
	"testing"

	devconfig "github.com/opencontainers/cgroups/devices/config"
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
		l, err := parseDevicesList([]byte(tc.in))
		if (err != nil) != tc.wantErr {
			t.Errorf("%q: error %v, want error %v", tc.in, err, tc.wantErr)
			continue
		}
		if err != nil {
			if !errors.Is(err, ErrInvalid) {
				t.Errorf("%q: error %v does not wrap ErrInvalid", tc.in, err)
			}
			continue
		}
		var got []string
		for _, r := range l.rules {
			got = append(got, r.CgroupString())
		}
		if l.allowAll != tc.allowAll || strings.Join(got, "|") != strings.Join(tc.rules, "|") {
			t.Errorf("%q: got allowAll %v rules %q, want %v %q", tc.in, l.allowAll, got, tc.allowAll, tc.rules)
		}
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
		l, err := parseDevicesList([]byte(tc.list))
		if err != nil {
			t.Fatal(err)
		}
		r, err := tc.rule.normalize()
		if err != nil {
			t.Fatal(err)
		}
		if got := l.missing(r.oci()); got != tc.want {
			t.Errorf("list %q, rule %s: missing %q, want %q", tc.list, tc.rule, got, tc.want)
		}
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
			if err != nil || back != r {
				t.Errorf("rule %+v formats as %q, parses back as %+v, %v", r, r.CgroupString(), back, err)
			}
		}
	})
}
