package ldcache

import (
	"bytes"
	"strings"
	"testing"
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
			if l.line <= prev || l.line > total {
				t.Fatalf("line number %d after %d (input has %d lines)", l.line, prev, total)
			}
			prev = l.line
			if (l.dir == "") == (l.includes == nil) {
				t.Fatalf("line %d: want exactly one of a directory or includes, got %q and %q", l.line, l.dir, l.includes)
			}
			if strings.ContainsAny(l.dir, "#\x00\n") {
				t.Fatalf("line %d: directory %q keeps a comment, NUL or newline", l.line, l.dir)
			}
			if l.dir != "" && isSpace(l.dir[0]) {
				t.Fatalf("line %d: directory %q starts with a blank", l.line, l.dir)
			}
			for _, w := range l.includes {
				if w == "" || strings.ContainsAny(w, " \t#\x00\n") {
					t.Fatalf("line %d: include pattern %q", l.line, w)
				}
			}
		}
	})
}
