package driver

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestParseDriverVer: the Windows version of nv_dispi.inf's DriverVer line
// gives NVIDIA's from its last five digits; anything else gives none.
func TestParseDriverVer(t *testing.T) {
	for _, tc := range []struct {
		name, inf, want string
	}{
		{"551.86", "[Version]\r\nDriverVer   = 03/07/2024,31.0.15.5186\r\n", "551.86"},
		{"560.94", "DriverVer=08/14/2024,32.0.15.6094\n", "560.94"},
		{"lowercase key", "driverver = 01/01/2025,32.0.15.7216\n", "572.16"},
		{"no date", "DriverVer = 31.0.15.5186\n", ""},
		{"three parts", "DriverVer = 03/07/2024,31.0.15\n", ""},
		{"not numbers", "DriverVer = 03/07/2024,31.0.a5.5186\n", ""},
		{"too short", "DriverVer = 03/07/2024,31.0.1.86\n", ""},
		{"leading zeros", "DriverVer = 03/07/2024,31.0.10.0012\n", ""},
		{"none", "[Version]\nClass = Display\n", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := parseDriverVer([]byte(tc.inf))
			assert.Equal(t, tc.want, got)
			assert.Equal(t, tc.want != "", ok)
		})
	}
}
