package ldcache

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// FuzzParseConf feeds parseConf an image's ld.so.conf (or an include file),
// which the image controls: it must not panic, and every line it returns
// must be one glibc would act on.
func FuzzParseConf(f *testing.F) {
	f.Add([]byte("include /etc/ld.so.conf.d/*.conf\n/usr/local/lib\n"))
	f.Add([]byte("# comment\n\t/opt/lib # trailing\nhwcap 1 tls\ninclude\ta.conf  b.conf\n"))
	f.Add([]byte("/lib\x00/hidden\ninclude\n\n/usr/lib=ELF\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		lines := parseConf(data)
		total := bytes.Count(data, []byte("\n")) + 1
		prev := 0
		for _, l := range lines {
			require.Greater(t, l.line, prev, "line number %d after %d (input has %d lines)", l.line, prev, total)
			require.LessOrEqual(t, l.line, total, "line number %d after %d (input has %d lines)", l.line, prev, total)
			prev = l.line
			require.NotEqual(t, l.dir == "", l.includes == nil, "line %d: want exactly one of a directory or includes, got %q and %q", l.line, l.dir, l.includes)
			require.False(t, strings.ContainsAny(l.dir, "#\x00\n"), "line %d: directory %q keeps a comment, NUL or newline", l.line, l.dir)
			if l.dir != "" {
				require.False(t, isSpace(l.dir[0]), "line %d: directory %q starts with a blank", l.line, l.dir)
			}
			for _, w := range l.includes {
				require.NotEmpty(t, w, "line %d: include pattern %q", l.line, w)
				require.False(t, strings.ContainsAny(w, " \t#\x00\n"), "line %d: include pattern %q", l.line, w)
			}
		}
	})
}
