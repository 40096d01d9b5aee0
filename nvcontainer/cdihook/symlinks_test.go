package cdihook

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseLinks(t *testing.T) {
	got, err := ParseLinks([]string{"a::/x/y/", "a::/x/y", "b::/x/y", "../c.so::/lib/c"})
	require.NoError(t, err)
	want := []Link{{"a", "/x/y"}, {"b", "/x/y"}, {"../c.so", "/lib/c"}}
	require.Equal(t, want, got)
	for _, bad := range []string{"", "::/x", "a::", "a:/x", "a::/"} {
		t.Run(fmt.Sprintf("%q", bad), func(t *testing.T) {
			_, err := ParseLinks([]string{bad})
			if assert.Error(t, err, "ParseLinks(%q) accepted", bad) {
				assert.Contains(t, err.Error(), fmt.Sprintf("parsing link %q", bad), "the error quotes the argument")
			}
		})
	}
}
