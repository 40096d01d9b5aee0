package oci_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-nvc/nvc/internal/oci"
)

func TestParseState(t *testing.T) {
	tests := []struct {
		name, in     string
		bundle, root string
		pid          int
		wantErr      string
	}{
		{name: "runc state", in: `{"ociVersion":"1.0.2","id":"c1","status":"creating","pid":4242,"bundle":"/run/b"}`, bundle: "/run/b", pid: 4242},
		{name: "pre-17.06 bundlePath", in: `{"pid":7,"bundlePath":"/old/b"}`, bundle: "/old/b", pid: 7},
		{name: "bundle wins over bundlePath", in: `{"bundle":"/new","bundlePath":"/old"}`, bundle: "/new"},
		{name: "crun adds root", in: `{"ociVersion":"1.0","id":"c","pid":0,"root":"/run/b/rootfs","bundle":"/run/b","status":"created"}`, bundle: "/run/b", root: "/run/b/rootfs"},
		{name: "whitespace around", in: "\n {\"bundle\":\"/b\"} \n", bundle: "/b"},
		{name: "no bundle", in: `{"pid":1}`, wantErr: `parsing OCI state "{\"pid\":1}": no "bundle" or "bundlePath"`},
		{name: "negative pid", in: `{"pid":-1,"bundle":"/b"}`, wantErr: "negative pid -1"},
		{name: "fractional pid", in: `{"pid":1.5,"bundle":"/b"}`, wantErr: "pid"},
		{name: "wrong type", in: `{"bundle":3}`, wantErr: "bundle"},
		{name: "syntax error gives the offset", in: `{"bundle":"/b",}`, wantErr: "at offset 16"},
		{name: "not an object", in: `["/b"]`, wantErr: "not a JSON object"},
		{name: "empty", in: ``, wantErr: `parsing OCI state "": not a JSON object`},
		{name: "trailing data", in: `{"bundle":"/b"} {}`, wantErr: "invalid character"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st, err := oci.ReadState(strings.NewReader(tt.in))
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr, "ReadState(%q)", tt.in)
				require.Nil(t, st, "ReadState(%q) with an error", tt.in)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.bundle, st.BundleDir(), "ReadState(%q) = %+v", tt.in, st)
			assert.Equal(t, tt.root, st.Root, "ReadState(%q) = %+v", tt.in, st)
			assert.Equal(t, tt.pid, st.PID, "ReadState(%q) = %+v", tt.in, st)
		})
	}
}

func TestReadStateTooLarge(t *testing.T) {
	big := `{"bundle":"/b","id":"` + strings.Repeat("x", oci.MaxStateSize) + `"}`
	_, err := oci.ReadState(strings.NewReader(big))
	require.ErrorIs(t, err, oci.ErrTooLarge, "oversized state")
	require.True(t, strings.HasPrefix(err.Error(), "reading OCI state: more than 1048576 bytes"), "oversized state: %v", err)
	long := `{"bundle":"/b","id":"` + strings.Repeat("x", 100)
	_, err = oci.ParseState([]byte(long))
	assert.ErrorContains(t, err, "... (121 bytes)", "error should quote a bounded excerpt")
}

func TestReadLimited(t *testing.T) {
	for _, tt := range []struct {
		in      string
		limit   int64
		tooLong bool
	}{{"", 0, false}, {"abc", 3, false}, {"abcd", 3, true}, {"a", 0, true}} {
		t.Run(fmt.Sprintf("%q/%d", tt.in, tt.limit), func(t *testing.T) {
			got, err := oci.ReadLimited(strings.NewReader(tt.in), tt.limit)
			if tt.tooLong {
				assert.ErrorIs(t, err, oci.ErrTooLarge, "ReadLimited(%q, %d)", tt.in, tt.limit)
				assert.Nil(t, got, "ReadLimited(%q, %d)", tt.in, tt.limit)
				return
			}
			if assert.NoError(t, err, "ReadLimited(%q, %d)", tt.in, tt.limit) {
				assert.Equal(t, tt.in, string(got), "ReadLimited(%q, %d)", tt.in, tt.limit)
			}
		})
	}
}
