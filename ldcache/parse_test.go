package ldcache_test

import (
	"bytes"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-nvc/nvc/internal/testutil"
	"github.com/go-nvc/nvc/ldcache"
)

func printOf(t *testing.T, path string) []byte {
	t.Helper()
	c, err := ldcache.Open(path)
	require.NoError(t, err, "Open")
	var buf bytes.Buffer
	require.NoError(t, c.Print(&buf, path), "Print")
	return buf.Bytes()
}

func TestPrintHostCache(t *testing.T) {
	want := runLdconfig(t, "-p", "-C", "/etc/ld.so.cache")
	got := printOf(t, "/etc/ld.so.cache")
	if !bytes.Equal(got, want) {
		assert.Fail(t, "Print differs from ldconfig -p", diff(want, got))
	}
}

func TestRoundTripHostCache(t *testing.T) {
	b, err := os.ReadFile("/etc/ld.so.cache")
	if err != nil {
		testutil.Unavailable(t, "no host cache: %v", err)
	}
	c, err := ldcache.Parse(b)
	require.NoError(t, err, "Parse")
	out, err := c.MarshalBinary()
	require.NoError(t, err, "MarshalBinary")
	assert.True(t, bytes.Equal(out, b), "re-encoded host cache differs: %d bytes vs %d; first difference at %d", len(out), len(b), firstDiff(out, b))
}

func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

func diff(want, got []byte) string {
	wl, gl := bytes.Split(want, []byte("\n")), bytes.Split(got, []byte("\n"))
	for i := range max(len(wl), len(gl)) {
		var w, g []byte
		if i < len(wl) {
			w = wl[i]
		}
		if i < len(gl) {
			g = gl[i]
		}
		if !bytes.Equal(w, g) {
			return "line " + string(rune('0'+i%10)) + ":\nwant " + string(w) + "\ngot  " + string(g)
		}
	}
	return "(same lines)"
}
