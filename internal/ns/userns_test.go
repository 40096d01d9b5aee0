package ns

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestIdentityMap(t *testing.T) {
	tests := []struct {
		name, m string
		want    bool
	}{
		{"initial namespace", "         0          0 4294967295\n", true},
		{"rootless podman", "         0       1000          1\n         1     100000      65536\n", false},
		{"runc user namespace", "0 100000 65536\n", false},
		{"empty", "", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, IdentityMap(tc.m))
		})
	}
}
