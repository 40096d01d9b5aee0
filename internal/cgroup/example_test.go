package cgroup_test

import (
	"fmt"
	"strings"

	"github.com/moby/sys/mountinfo"

	"github.com/go-nvc/nvc/internal/cgroup"
)

// Locate maps a container's /proc/PID/cgroup to a directory through the
// caller's mounts; on a hybrid host the devices line wins.
func ExampleLocate() {
	procCgroup := "12:devices:/docker/0123abcd\n4:memory:/docker/0123abcd\n0::/docker/0123abcd\n"
	mounts := []*mountinfo.Info{
		{Root: "/", Mountpoint: "/sys/fs/cgroup/devices", FSType: "cgroup", VFSOptions: "rw,devices"},
		{Root: "/", Mountpoint: "/sys/fs/cgroup/unified", FSType: "cgroup2", VFSOptions: "rw"},
	}
	entries, err := cgroup.ParseProcCgroup(strings.NewReader(procCgroup))
	if err != nil {
		panic(err)
	}
	loc, err := cgroup.Locate(entries, mounts)
	if err != nil {
		panic(err)
	}
	fmt.Println(loc.Version, loc.Path)
	// Output: v1 /sys/fs/cgroup/devices/docker/0123abcd
}
