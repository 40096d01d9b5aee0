package cdihook

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-nvc/nvc/internal/testutil"
)

func TestUpdateApplicationProfile(t *testing.T) {
	tests := []struct {
		name, tree string
		want       string // "": no file
	}{
		{"minors 0 and 3", "char dev/nvidia0 195 0 0666\nchar dev/nvidia3 195 3 0666\nchar dev/nvidiactl 195 255 0666\n", "0x9"},
		{"minor 64 dropped", "char dev/nvidia64 195 64 0666\nchar dev/nvidia1 195 1 0666\n", "0x2"},
		{"only minors of 64 and above", "char dev/nvidia70 195 70 0666\n", ""},
		{"not a device", "file dev/nvidia0\n", ""},
		{"a link to a device", "char dev/real 195 2 0666\nsymlink dev/nvidia2 real\n", ""},
		{"no GPU", "char dev/nvidiactl 195 255 0666\n", ""},
		{"no /dev", "dir etc\n", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := testutil.RootTree(t, tt.tree)
			_, err := UpdateApplicationProfile(context.Background(), root)
			require.NoError(t, err)
			b, err := os.ReadFile(filepath.Join(root, AppProfileFile))
			if tt.want == "" {
				require.ErrorIs(t, err, os.ErrNotExist, "profile written")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, `{"profiles":[{"name":"_container_","settings":["EGLVisibleDGPUDevices",`+tt.want+`]}],"rules":[{"pattern":[],"profile":"_container_"}]}`, string(b))
			assert.Equal(t, os.FileMode(0o444), modeOf(t, filepath.Join(root, AppProfileFile)))
			assert.Equal(t, os.FileMode(0o555), modeOf(t, filepath.Join(root, AppProfileDir)))
		})
	}
}

// A link the image planted at the profile's place is replaced, not
// written through; a link at its dir is resolved inside the root.
func TestUpdateApplicationProfileDoesNotFollowLinks(t *testing.T) {
	outside := testutil.Tree(t, "file target host\ndir profiles\n")
	for _, tt := range []struct{ name, tree string }{
		{"file link", "symlink etc/nvidia/nvidia-application-profiles-rc.d/10-container.conf " + filepath.Join(outside, "target") + "\n"},
		{"dir link", "symlink etc/nvidia/nvidia-application-profiles-rc.d " + filepath.Join(outside, "profiles") + "\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			root := testutil.RootTree(t, "char dev/nvidia0 195 0 0666\n"+tt.tree)
			_, _ = UpdateApplicationProfile(context.Background(), root)
			b, err := os.ReadFile(filepath.Join(outside, "target"))
			require.NoError(t, err)
			assert.Equal(t, "host", string(b), "file outside the root written")
			entries, err := os.ReadDir(filepath.Join(outside, "profiles"))
			require.NoError(t, err)
			assert.Empty(t, entries, "file written outside the root")
		})
	}
}
