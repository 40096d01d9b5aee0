package rootfs

import (
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestStaleTempMatchesPattern: the hand-written matcher says what the
// pattern it replaced says, on names around every edge of it.
func TestStaleTempMatchesPattern(t *testing.T) {
	pattern := regexp.MustCompile(`^\..+\.nvc-[0-9a-f]{12}$`)
	for _, name := range []string{
		".libcuda.so.1.nvc-0123456789ab", ".x.nvc-0123456789ab", "..nvc-0123456789ab", ".nvc-0123456789ab",
		"x.libcuda.so.1.nvc-0123456789ab", ".a.nvc-0123456789aB", ".a.nvc-0123456789a", ".a.nvc-0123456789abc",
		".a.nvc_0123456789ab", ".a\nb.nvc-0123456789ab", ".a.nvc-0123456789a\n", ".ld.so.cache.nvc-ffffffffffff",
		".a.nvc-.nvc-0123456789ab", "", ".", ".a.nvc-g123456789ab", ".a.NVC-0123456789ab",
	} {
		t.Run(name, func(t *testing.T) {
			assert.Equal(t, pattern.MatchString(name), staleTemp(name), "staleTemp(%q)", name)
		})
	}
}
