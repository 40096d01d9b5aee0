package cdihook

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-nvc/nvc/internal/elfwriter"
	"github.com/go-nvc/nvc/internal/testutil"
)

// writeCompatLib writes an ELF libcuda.so at rel in root with a
// .note.cuda.fwd_compatibility note owned by owner with desc (no note
// when desc is empty).
func writeCompatLib(t *testing.T, root, rel, owner, desc string) {
	t.Helper()
	o := elfwriter.Library("libcuda.so.1")
	if desc != "" {
		o.Notes = []elfwriter.Note{{Section: compatNoteSection, Owner: owner, Type: 1, Desc: []byte(desc)}}
	}
	require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(root, rel)), 0o755))
	require.NoError(t, elfwriter.WriteFile(filepath.Join(root, rel), o, 0o644))
}

func TestEnableCUDACompatNote(t *testing.T) {
	const note = `{"Format":1,"CUDA Version":"12.8","Driver":[550,560],"Device":[]}`
	tests := []struct {
		name, lib, owner, desc string
		opts                   CUDACompatOptions
		use                    bool
	}{
		{"listed driver, newer library", "libcuda.so.570.86.10", compatNoteOwner, note, CUDACompatOptions{HostDriverVersion: "550.54.15"}, true},
		{"driver major not in the note", "libcuda.so.570.86.10", compatNoteOwner, note, CUDACompatOptions{HostDriverVersion: "535.104.05"}, false},
		{"same major, newer minor, listed", "libcuda.so.560.35.03", compatNoteOwner, note, CUDACompatOptions{HostDriverVersion: "560.28.03"}, true},
		{"same major, older, listed", "libcuda.so.560.28.03", compatNoteOwner, note, CUDACompatOptions{HostDriverVersion: "560.35.03"}, false},
		{"host CUDA only, older host", "libcuda.so.570.86.10", compatNoteOwner, note, CUDACompatOptions{HostCUDAVersion: "12.4"}, true},
		{"host CUDA only, same", "libcuda.so.570.86.10", compatNoteOwner, note, CUDACompatOptions{HostCUDAVersion: "12.8"}, false},
		{"host CUDA only, no note", "libcuda.so.570.86.10", compatNoteOwner, "", CUDACompatOptions{HostCUDAVersion: "12.4"}, false},
		{"driver and CUDA, no note", "libcuda.so.570.86.10", compatNoteOwner, "", CUDACompatOptions{HostDriverVersion: "550.54.15", HostCUDAVersion: "12.4"}, false},
		{"driver and CUDA, note: driver decides", "libcuda.so.570.86.10", compatNoteOwner, note, CUDACompatOptions{HostDriverVersion: "550.54.15", HostCUDAVersion: "12.9"}, true},
		{"someone else's note is no note", "libcuda.so.570.86.10", "ACME", note, CUDACompatOptions{HostDriverVersion: "535.104.05"}, true},
		{"note that is not JSON is no note", "libcuda.so.570.86.10", compatNoteOwner, "not json", CUDACompatOptions{HostDriverVersion: "535.104.05"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := testutil.Tree(t, "dir etc/ld.so.conf.d\n")
			writeCompatLib(t, root, "usr/local/cuda/compat/"+tt.lib, tt.owner, tt.desc)
			res, err := EnableCUDACompat(context.Background(), root, &tt.opts)
			require.NoError(t, err)
			assert.Equal(t, tt.use, res.Enabled, "Enabled (reason %q)", res.Reason)
			if tt.use {
				assert.Equal(t, map[string]string{compatConfName: "/usr/local/cuda/compat\n"}, compatConfs(t, root))
			} else {
				assert.Empty(t, compatConfs(t, root), "confs written without compat")
			}
		})
	}
}

func TestEnableCUDACompatReadsNote(t *testing.T) {
	root := t.TempDir()
	writeCompatLib(t, root, "usr/local/cuda/compat/libcuda.so.570.86.10", compatNoteOwner, `{"CUDA Version":"12.8","Driver":[535, 550]}`)
	res, err := EnableCUDACompat(context.Background(), root, &CUDACompatOptions{HostDriverVersion: "550.54.15"})
	require.NoError(t, err)
	require.Equal(t, &CompatNote{CUDAVersion: "12.8", Driver: []int{535, 550}}, res.Note)
}

// --cuda-compat-container-root: the dir given is searched, resolved in
// the root, and named in the conf.
func TestEnableCUDACompatContainerRoot(t *testing.T) {
	outside := t.TempDir()
	writeCompatLib(t, outside, "compat/libcuda.so.570.86.10", compatNoteOwner, "")
	for _, tt := range []struct {
		name, tree, dir string
		use             bool
	}{
		{"own dir", "dir etc\n", "/opt/cuda-compat", true},
		{"link out of the root", "dir etc\ndir opt\nsymlink opt/link " + outside + "\n", "/opt/link/compat", false},
		{"default dir not searched", "dir etc\n", "/elsewhere", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			root := testutil.Tree(t, tt.tree)
			writeCompatLib(t, root, "opt/cuda-compat/libcuda.so.570.86.10", compatNoteOwner, "")
			writeCompatLib(t, root, "usr/local/cuda/compat/libcuda.so.570.86.10", compatNoteOwner, "")
			res, err := EnableCUDACompat(context.Background(), root, &CUDACompatOptions{HostDriverVersion: "550.54.15", CompatDir: tt.dir})
			require.NoError(t, err)
			require.Equal(t, tt.use, res.Enabled, "Enabled (reason %q)", res.Reason)
			if tt.use {
				assert.Equal(t, map[string]string{compatConfName: tt.dir + "\n"}, compatConfs(t, root))
			}
		})
	}
	_, err := EnableCUDACompat(context.Background(), t.TempDir(), &CUDACompatOptions{HostDriverVersion: "550", CompatDir: "rel/dir"})
	require.ErrorContains(t, err, `"rel/dir"`)
}

func TestParseVersion(t *testing.T) {
	for _, tt := range []struct {
		a, b string
		want int
	}{{"12.4", "12.4.0", 0}, {"575.57.08", "575.57.8", 0}, {"12.10", "12.9", 1}, {"v12.4.1", "12.4", 1}, {"12.4.0-rc1", "12.4", -1}, {"550", "550.54.15", -1}} {
		t.Run(tt.a+" vs "+tt.b, func(t *testing.T) {
			a, err := parseVersion(tt.a)
			require.NoError(t, err)
			b, err := parseVersion(tt.b)
			require.NoError(t, err)
			assert.Equal(t, tt.want, a.compare(b))
		})
	}
	for _, bad := range []string{"", "x.1", "-1.2", "+5", "1.2.3.4", "1..2"} {
		_, err := parseVersion(bad)
		assert.Error(t, err, "%q", bad)
	}
}
