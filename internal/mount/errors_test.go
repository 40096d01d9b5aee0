package mount

import (
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestErrorNamesEverything(t *testing.T) {
	err := error(&Error{Op: "move_mount", Source: "/usr/lib/libcuda.so.1", Target: "/usr/lib64/libcuda.so.1",
		Flags: (ReadOnly | NoSuid | NoDev).String(), Err: syscall.EINVAL})
	want := `move_mount "/usr/lib/libcuda.so.1" onto "/usr/lib64/libcuda.so.1" (ro,nosuid,nodev): invalid argument`
	assert.EqualError(t, err, want)
	assert.ErrorIs(t, err, syscall.EINVAL, "the errno is lost")
	short := &Error{Op: "open", Source: "/x", Err: ErrTargetType}
	assert.EqualError(t, short, `open "/x": target type does not fit the source`)
}

func TestFlagStrings(t *testing.T) {
	for _, tc := range []struct {
		got, want string
	}{
		{Attr(0).String(), "rw"},
		{(ReadOnly | NoExec).String(), "ro,noexec"},
		{(ReadOnly | NoSuid | NoDev | NoExec).String(), "ro,nosuid,nodev,noexec"},
		{msString((ReadOnly | NoSuid).msFlags() | syscall.MS_BIND | syscall.MS_REMOUNT), "bind,remount,ro,nosuid"},
		{msString(msFromStatfs(0x1 | 0x8 | 0x1000 | 0x20)), "ro,noexec,relatime"},
	} {
		t.Run(tc.want, func(t *testing.T) {
			assert.Equal(t, tc.want, tc.got)
		})
	}
}
