package cgroup

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/moby/sys/mountinfo"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseProcCgroup(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     []Entry
		wantErr  bool
	}{
		{"hybrid", "5:devices:/docker/abc\n4:cpu,cpuacct:/docker/abc\n1:name=systemd:/\n0::/\n", []Entry{
			{5, []string{"devices"}, "/docker/abc"},
			{4, []string{"cpu", "cpuacct"}, "/docker/abc"},
			{1, []string{"name=systemd"}, "/"},
			{0, nil, "/"},
		}, false},
		{"v2 with colon in path", "0::/a:b/c\n\n", []Entry{{0, nil, "/a:b/c"}}, false},
		{"empty", "", nil, false},
		{"one colon", "0:/x\n", nil, true},
		{"bad id", "x::/\n", nil, true},
		{"negative id", "-1::/\n", nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseProcCgroup(strings.NewReader(tc.in))
			if tc.wantErr {
				require.Error(t, err)
				assert.ErrorIs(t, err, ErrInvalid)
			} else {
				require.NoError(t, err)
			}
			assert.True(t, slices.EqualFunc(got, tc.want, entryEqual), "got %+v, want %+v", got, tc.want)
		})
	}
}

func entryEqual(a, b Entry) bool {
	return a.ID == b.ID && a.Path == b.Path && slices.Equal(a.Controllers, b.Controllers)
}

func mnt(root, mountpoint, fstype, superOpts string) *mountinfo.Info {
	return &mountinfo.Info{Root: root, Mountpoint: mountpoint, FSType: fstype, VFSOptions: superOpts}
}

// The mounts of a cgroup v1 hybrid host such as the CI machine.
var hybridMounts = []*mountinfo.Info{
	mnt("/", "/sys/fs/cgroup/cpu", "cgroup", "rw,cpu"),
	mnt("/", "/sys/fs/cgroup/devices", "cgroup", "rw,devices"),
	mnt("/", "/sys/fs/cgroup/unified", "cgroup2", "rw"),
}

func TestLocate(t *testing.T) {
	for _, tc := range []struct {
		name    string
		cgroup  string
		mounts  []*mountinfo.Info
		want    Location
		wantErr error
		errText string
	}{
		{"hybrid picks v1", "5:devices:/docker/abc\n1:cpu:/docker/abc\n0::/docker/abc\n", hybridMounts,
			Location{V1, "/sys/fs/cgroup/devices/docker/abc", "/sys/fs/cgroup/devices", "/", "/docker/abc"}, nil, ""},
		{"hybrid without devices line is v2", "1:cpu:/x\n0::/x\n", hybridMounts,
			Location{V2, "/sys/fs/cgroup/unified/x", "/sys/fs/cgroup/unified", "/", "/x"}, nil, ""},
		{"unified", "0::/system.slice/docker-abc.scope\n", []*mountinfo.Info{mnt("/", "/sys/fs/cgroup", "cgroup2", "rw,nsdelegate")},
			Location{V2, "/sys/fs/cgroup/system.slice/docker-abc.scope", "/sys/fs/cgroup", "/", "/system.slice/docker-abc.scope"}, nil, ""},
		{"co-mounted controllers", "3:cpu,devices:/a\n", []*mountinfo.Info{mnt("/", "/cg/cpu,devices", "cgroup", "rw,cpu,devices")},
			Location{V1, "/cg/cpu,devices/a", "/cg/cpu,devices", "/", "/a"}, nil, ""},
		{"mount root stripped", "5:devices:/docker/abc/sub\n", []*mountinfo.Info{mnt("/docker/abc", "/sys/fs/cgroup/devices", "cgroup", "rw,devices")},
			Location{V1, "/sys/fs/cgroup/devices/sub", "/sys/fs/cgroup/devices", "/docker/abc", "/docker/abc/sub"}, nil, ""},
		{"cgroup is the mount root", "0::/docker/abc\n", []*mountinfo.Info{mnt("/docker/abc", "/sys/fs/cgroup", "cgroup2", "rw")},
			Location{V2, "/sys/fs/cgroup", "/sys/fs/cgroup", "/docker/abc", "/docker/abc"}, nil, ""},
		{"skips a mount outside the namespace", "0::/x\n", []*mountinfo.Info{mnt("/../..", "/a", "cgroup2", "rw"), mnt("/", "/b", "cgroup2", "rw")},
			Location{V2, "/b/x", "/b", "/", "/x"}, nil, ""},
		{"mount root outside the namespace", "5:devices:/x\n", []*mountinfo.Info{mnt("/..", "/sys/fs/cgroup/devices", "cgroup", "rw,devices")},
			Location{}, ErrNotFound, `mount root "/.."`},
		{"nested mount root outside the namespace", "0::/x\n", []*mountinfo.Info{mnt("/../../system.slice", "/sys/fs/cgroup", "cgroup2", "rw")},
			Location{}, ErrNotFound, `"/../../system.slice" lies outside`},
		{"cgroup outside the namespace", "0::/../other\n", hybridMounts, Location{}, ErrNotFound, `"/../other" lies outside`},
		{"prefix is not a parent", "5:devices:/docker/abcd\n", []*mountinfo.Info{mnt("/docker/abc", "/d", "cgroup", "rw,devices")},
			Location{}, ErrNotFound, "no mount holds it"},
		{"devices line without its mount", "5:devices:/x\n0::/x\n", []*mountinfo.Info{mnt("/", "/sys/fs/cgroup/unified", "cgroup2", "rw")},
			Location{}, ErrNotFound, "v1 mount"},
		{"devices named but not the controller", "5:devices:/x\n", []*mountinfo.Info{mnt("/", "/sys/fs/cgroup/devices", "cgroup", "rw,name=devices")},
			Location{}, ErrNotFound, "no mount holds it"},
		{"no usable line", "1:cpu:/x\n", hybridMounts, Location{}, ErrNotFound, "devices or 0::"},
		{"removed cgroup", "0::/x (deleted)\n", hybridMounts, Location{}, ErrNotFound, "removed"},
		{"unclean path", "0::/a/../b\n", hybridMounts, Location{}, ErrInvalid, "not a clean"},
		{"relative path", "0::a\n", hybridMounts, Location{}, ErrInvalid, "not a clean"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			entries, err := ParseProcCgroup(strings.NewReader(tc.cgroup))
			require.NoError(t, err)
			got, err := Locate(entries, tc.mounts)
			if tc.wantErr != nil {
				require.ErrorIs(t, err, tc.wantErr)
				require.ErrorContains(t, err, tc.errText)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

// FuzzParseProcCgroup: no panic; entries come back only without an error,
// and each entry formats back to its line (where the ID is written
// canonically and no carriage return, which the line scanner drops, is in
// the input).
func FuzzParseProcCgroup(f *testing.F) {
	f.Add("5:devices:/docker/abc\n0::/\n")
	f.Add("0::/a:b\n\n1:name=systemd:/x (deleted)\n")
	f.Add("x:y\n")
	f.Fuzz(func(t *testing.T, in string) {
		entries, err := ParseProcCgroup(strings.NewReader(in))
		if err != nil {
			require.Nil(t, entries, "entries with error %v", err)
			return
		}
		_, _ = Locate(entries, hybridMounts)
		if strings.Contains(in, "\r") {
			return
		}
		var lines []string
		for l := range strings.Lines(in) {
			if l = strings.TrimSuffix(l, "\n"); l != "" {
				lines = append(lines, l)
			}
		}
		require.Len(t, entries, len(lines), "entries from %d lines", len(lines))
		for i, e := range entries {
			if id, _, _ := strings.Cut(lines[i], ":"); id != strconv.Itoa(e.ID) {
				continue
			}
			back := fmt.Sprintf("%d:%s:%s", e.ID, strings.Join(e.Controllers, ","), e.Path)
			assert.Equal(t, lines[i], back, "line %q parsed as %+v", lines[i], e)
		}
	})
}
