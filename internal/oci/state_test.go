package oci_test

import (
	"errors"
	"strings"
	"testing"

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
				if err == nil || st != nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("ReadState(%q) = %+v, %v; want error containing %q", tt.in, st, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if st.BundleDir() != tt.bundle || st.Root != tt.root || st.PID != tt.pid {
				t.Errorf("ReadState(%q) = %+v", tt.in, st)
			}
		})
	}
}

func TestReadStateTooLarge(t *testing.T) {
	big := `{"bundle":"/b","id":"` + strings.Repeat("x", oci.MaxStateSize) + `"}`
	_, err := oci.ReadState(strings.NewReader(big))
	if !errors.Is(err, oci.ErrTooLarge) || !strings.HasPrefix(err.Error(), "reading OCI state: more than 1048576 bytes") {
		t.Fatalf("oversized state: %v", err)
	}
	long := `{"bundle":"/b","id":"` + strings.Repeat("x", 100)
	_, err = oci.ParseState([]byte(long))
	if err == nil || !strings.Contains(err.Error(), "... (121 bytes)") {
		t.Errorf("error should quote a bounded excerpt: %v", err)
	}
}

func TestReadLimited(t *testing.T) {
	for _, tt := range []struct {
		in      string
		limit   int64
		tooLong bool
	}{{"", 0, false}, {"abc", 3, false}, {"abcd", 3, true}, {"a", 0, true}} {
		got, err := oci.ReadLimited(strings.NewReader(tt.in), tt.limit)
		if tt.tooLong {
			if !errors.Is(err, oci.ErrTooLarge) || got != nil {
				t.Errorf("ReadLimited(%q, %d) = %q, %v; want ErrTooLarge", tt.in, tt.limit, got, err)
			}
			continue
		}
		if err != nil || string(got) != tt.in {
			t.Errorf("ReadLimited(%q, %d) = %q, %v", tt.in, tt.limit, got, err)
		}
	}
}
