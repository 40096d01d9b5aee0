package testutil

import (
	"testing"

	"github.com/moby/sys/mountinfo"
)

// MountsBelow lists the mount points below dir in this process's mount
// namespace (the host's, for a test that has not entered another): what a
// test compares before and after a step that must not mount on the host.
func MountsBelow(tb testing.TB, dir string) []string {
	tb.Helper()
	mounts, err := mountinfo.GetMounts(mountinfo.PrefixFilter(dir))
	if err != nil {
		tb.Fatalf("reading the mount table below %s: %v", dir, err)
	}
	var out []string
	for _, m := range mounts {
		out = append(out, m.Mountpoint)
	}
	return out
}
