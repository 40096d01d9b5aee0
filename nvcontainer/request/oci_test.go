package request_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/go-nvc/nvc/nvcontainer/request"
)

// The state and spec parsers are internal/oci's (tested there); these
// tests check what nvcontainer adds: its names for them, the container a
// hook's state and spec give, and the request.

func TestReadStateTooLarge(t *testing.T) {
	big := `{"bundle":"/b","id":"` + strings.Repeat("x", request.MaxStateSize) + `"}`
	_, err := request.ReadState(context.Background(), strings.NewReader(big))
	if !errors.Is(err, request.ErrTooLarge) {
		t.Fatalf("oversized state: %v", err)
	}
}

const minimalSpec = `{"ociVersion":"1.0.2","process":{"env":["PATH=/bin"]},"root":{"path":"rootfs"}}`

// request.Privileged = CAP_SYS_ADMIN in the bounding set; OCI 1.0.0-rc1…rc4 used a
// flat list (as NVIDIA's runtime hook reads it).
func TestPrivileged(t *testing.T) {
	tests := []struct {
		name string
		spec string
		want bool
	}{
		{"no capabilities", minimalSpec, false},
		{"bounding has CAP_SYS_ADMIN", `{"ociVersion":"1.2.0","process":{"capabilities":{"bounding":["CAP_CHOWN","CAP_SYS_ADMIN"]}},"root":{"path":"r"}}`, true},
		{"only effective has it", `{"ociVersion":"1.2.0","process":{"capabilities":{"effective":["CAP_SYS_ADMIN"],"bounding":["CAP_CHOWN"]}},"root":{"path":"r"}}`, false},
		{"flat rc list with it", `{"ociVersion":"1.0.0-rc2","process":{"env":["A=1"],"capabilities":["CAP_SYS_ADMIN"]},"root":{"path":"r"}}`, true},
		{"flat rc list without it", `{"ociVersion":"1.0.0-rc2","process":{"capabilities":["CAP_KILL"]},"root":{"path":"r"}}`, false},
	}
	for _, tt := range tests {
		spec, err := request.ParseSpec([]byte(tt.spec))
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if got := request.Privileged(spec); got != tt.want {
			t.Errorf("%s: request.Privileged = %v, want %v", tt.name, got, tt.want)
		}
	}
	if request.Privileged(nil) {
		t.Error("nil spec is privileged")
	}
}
