package nvc_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestNoExportedMutableGlobals: the public packages export no variable a
// caller could change under every other user of the package, except error
// sentinels (Err*), which are compared, never written. Lists and tables
// are functions returning a copy.
func TestNoExportedMutableGlobals(t *testing.T) {
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case "internal", "examples", "e2e", "testdata":
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
		require.NoError(t, err, path)
		for _, decl := range f.Decls {
			gd, ok := decl.(*ast.GenDecl)
			if !ok || gd.Tok != token.VAR {
				continue
			}
			for _, spec := range gd.Specs {
				for _, name := range spec.(*ast.ValueSpec).Names {
					if name.IsExported() {
						assert.True(t, strings.HasPrefix(name.Name, "Err"), "%s: exported variable %s", path, name.Name)
					}
				}
			}
		}
		return nil
	})
	require.NoError(t, err)
}
