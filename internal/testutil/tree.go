package testutil

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/go-nvc/nvc/internal/fstree"
)

// Tree builds spec (see package fstree) in a new temp dir and returns it.
// Character devices are real nodes when running as root and plain marker
// files otherwise; use [RootTree] where a test needs real nodes.
func Tree(tb testing.TB, spec string) string {
	tb.Helper()
	root := tb.TempDir()
	BuildTree(tb, root, spec)
	return root
}

// RootTree is [Tree] with real character devices; it gates on root.
func RootTree(tb testing.TB, spec string) string {
	tb.Helper()
	RequireRoot(tb)
	return Tree(tb, spec)
}

// BuildTree builds spec under an existing root, failing tb on error.
func BuildTree(tb testing.TB, root, spec string) {
	tb.Helper()
	opts := &fstree.Options{CharAsFile: os.Geteuid() != 0}
	if err := fstree.Create(root, spec, opts); err != nil {
		tb.Fatal(err)
	}
}

// Bundle writes configJSON as config.json in a new temp dir, an OCI
// bundle without a rootfs, and returns the dir.
func Bundle(tb testing.TB, configJSON string) string {
	tb.Helper()
	dir := tb.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "config.json"), []byte(configJSON), 0o644); err != nil {
		tb.Fatal(err)
	}
	return dir
}
