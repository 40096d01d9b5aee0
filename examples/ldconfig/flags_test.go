package main

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-nvc/nvc/ldcache"
)

// The command line is read as glibc's argp reads ldconfig's.
func TestParseArgs(t *testing.T) {
	tests := []struct {
		args []string
		want options
	}{
		{nil, options{}},
		{[]string{"-p"}, options{print: true}},
		{[]string{"-pv", "-N", "-X"}, options{print: true, verbose: true, noCache: true, noLinks: true}},
		{[]string{"-n", "/a", "/b"}, options{noCache: true, onlyDirs: true, dirs: []string{"/a", "/b"}}},
		{[]string{"-C/x", "-r", "/root", "-f", "conf", "/d", "-i"}, options{cache: "/x", root: "/root", config: "conf", dirs: []string{"/d"}}},
		{[]string{"-vC", "/x"}, options{verbose: true, cache: "/x"}},
		{[]string{"--print-cache", "--verbose", "--format=old", "--ignore-aux-cache", "--generator", "g 1"},
			options{print: true, verbose: true, format: ldcache.FormatOld, generator: "g 1"}},
		{[]string{"-c", "compat", "--format", "new"}, options{format: ldcache.FormatNew}},
		{[]string{"/a", "--", "-p", "/b"}, options{dirs: []string{"/a", "-p", "/b"}}},
		{[]string{"-"}, options{dirs: []string{"-"}}},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%q", tt.args), func(t *testing.T) {
			got, err := parseArgs(tt.args)
			require.NoError(t, err, "parseArgs(%q)", tt.args)
			assert.Equal(t, tt.want, *got, "parseArgs(%q)", tt.args)
		})
	}
	for msg, args := range map[string][]string{
		"unrecognized option '--nope'":                       {"--nope"},
		"option '--format' requires an argument":             {"--format"},
		"option requires an argument -- 'C'":                 {"-C"},
		"option requires an argument -- 'r'":                 {"-pr"},
		"invalid option -- 'Z'":                              {"-pZ"},
		`unknown cache format "x" (want new, compat or old)`: {"-cx"},
	} {
		t.Run(msg, func(t *testing.T) {
			_, err := parseArgs(args)
			assert.EqualError(t, err, msg, "parseArgs(%q)", args)
		})
	}
}
