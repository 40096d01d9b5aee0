package container

import (
	"crypto/sha256"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"syscall"
	"testing"
)

// Snapshot describes every entry of a tree: type, mode, owner, size,
// modification and change times, symlink target and file content hash.
type Snapshot map[string]string

// SnapshotTree records the tree at root; it does not follow symlinks.
func SnapshotTree(tb testing.TB, root string) Snapshot {
	tb.Helper()
	snap := Snapshot{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		snap[rel], err = describe(p)
		return err
	})
	if err != nil {
		tb.Fatalf("snapshotting %s: %v", root, err)
	}
	return snap
}

func describe(p string) (string, error) {
	var st syscall.Stat_t
	if err := syscall.Lstat(p, &st); err != nil {
		return "", err
	}
	s := fmt.Sprintf("mode=%o uid=%d gid=%d size=%d mtime=%d.%d ctime=%d.%d",
		st.Mode, st.Uid, st.Gid, st.Size, st.Mtim.Sec, st.Mtim.Nsec, st.Ctim.Sec, st.Ctim.Nsec)
	switch st.Mode & syscall.S_IFMT {
	case syscall.S_IFLNK:
		target, err := os.Readlink(p)
		return s + " link=" + target, err
	case syscall.S_IFREG:
		data, err := os.ReadFile(p)
		return fmt.Sprintf("%s sha256=%x", s, sha256.Sum256(data)), err
	}
	return s, nil
}

// timesRE matches the times in a Snapshot's descriptions.
var timesRE = regexp.MustCompile(` [mc]time=\S+`)

// Layout is the tree at root as sorted lines of path, type, mode, owner,
// size, link target and content hash, without times (creating and
// removing an entry changes its parent's): two equal layouts are the same
// tree, whatever was created and removed meanwhile.
func Layout(tb testing.TB, root string) string {
	tb.Helper()
	var lines []string
	for p, d := range SnapshotTree(tb, root) {
		lines = append(lines, p+" "+timesRE.ReplaceAllString(d, ""))
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

// DiffSnapshots lists what differs between two snapshots, sorted; empty
// means nothing changed.
func DiffSnapshots(before, after Snapshot) []string {
	var diffs []string
	for p, b := range before {
		if a, ok := after[p]; !ok {
			diffs = append(diffs, "removed "+p)
		} else if a != b {
			diffs = append(diffs, fmt.Sprintf("changed %s: %s -> %s", p, b, a))
		}
	}
	for p := range after {
		if _, ok := before[p]; !ok {
			diffs = append(diffs, "added "+p)
		}
	}
	sort.Strings(diffs)
	return diffs
}
