package devices

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestOneInRootOpener: the package resolves paths inside a root only
// through internal/inroot, the module's one opener; it does not call
// filepath-securejoin itself.
func TestOneInRootOpener(t *testing.T) {
	files, err := filepath.Glob("*.go")
	require.NoError(t, err)
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), name, nil, parser.ImportsOnly)
		require.NoError(t, err, name)
		for _, imp := range f.Imports {
			path, err := strconv.Unquote(imp.Path.Value)
			require.NoError(t, err)
			assert.NotContains(t, path, "filepath-securejoin", "%s imports %s", name, path)
		}
	}
}

// TestOpenInRootRegularOnly: a FIFO where a program or library is looked
// for is refused (ErrInvalid) without being opened for reading, which
// would block; a symlink out of the root stays inside it.
func TestOpenInRootRegularOnly(t *testing.T) {
	root := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(root, "sbin"), 0o755))
	require.NoError(t, syscall.Mkfifo(filepath.Join(root, "sbin/modprobe"), 0o644))
	_, err := openInRoot(root, "/sbin/modprobe")
	require.ErrorIs(t, err, ErrInvalid)

	require.NoError(t, os.WriteFile(filepath.Join(root, "sbin/real"), []byte("x"), 0o755))
	require.NoError(t, os.Symlink("/../../sbin/real", filepath.Join(root, "sbin/link")))
	f, err := openInRoot(root, "/sbin/link")
	require.NoError(t, err)
	defer f.Close()
	data := make([]byte, 4)
	n, err := f.Read(data)
	require.NoError(t, err)
	assert.Equal(t, "x", string(data[:n]), "the link resolved inside the root")
}
