package tegra

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
)

// DefaultMountSpecPath is the directory of the CSV mount specs, the
// default of nvidia-container-runtime.modes.csv.mount-spec-path.
const DefaultMountSpecPath = "/etc/nvidia-container-runtime/host-files-for-container.d"

// The values of a container's NVIDIA_REQUIRE_JETPACK
// (request.EnvRequireJetpack), which selects the CSV files beyond the
// base ones; it is not a requirement to check. Any other value (and none)
// means MountsBaseOnly.
const (
	MountsAll      = "csv-mounts=all"       // every *.csv file of the directory
	MountsBaseOnly = "csv-mounts=base-only" // devices.csv, drivers.csv, l4t.csv
)

// Kind is what a mount spec entry names.
type Kind string

// The kinds of entry.
const (
	KindDev Kind = "dev" // a character device node
	KindLib Kind = "lib" // a library or regular file
	KindSym Kind = "sym" // a symlink, created with its chain
	KindDir Kind = "dir" // a directory
)

// ErrSyntax is matched by the error for a line Parse cannot read.
var ErrSyntax = errors.New("invalid mount spec")

// maxLine bounds a line of a mount spec file.
const maxLine = 64 << 10

// Entry is one line of a mount spec file.
type Entry struct {
	Kind Kind
	// Path is the absolute path on the host and in the container; it
	// may be a glob pattern.
	Path string
	// File and Line say where the entry was read (Line counts from 1);
	// File is a host path ([Load] joins its root with the path given).
	File string
	Line int
}

// String is "KIND, PATH" as the file writes it.
func (e Entry) String() string { return string(e.Kind) + ", " + e.Path }

// Parse reads the entries of one mount spec file; name is the file's
// name in errors. Blank lines and '#' comments are skipped. The first bad
// line stops the parse with an error naming name and the line, matching
// [ErrSyntax].
func Parse(r io.Reader, name string) ([]Entry, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), maxLine)
	var out []Entry
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		e, err := parseLine(line)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %q: %w", name, n, line, err)
		}
		e.File, e.Line = name, n
		out = append(out, e)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: reading: %w", name, err)
	}
	return out, nil
}

func parseLine(line string) (Entry, error) {
	kind, p, ok := strings.Cut(line, ",")
	if !ok {
		return Entry{}, fmt.Errorf("want KIND, PATH: %w", ErrSyntax)
	}
	e := Entry{Kind: Kind(strings.TrimSpace(kind)), Path: strings.TrimSpace(p)}
	switch e.Kind {
	case KindDev, KindLib, KindSym, KindDir:
	default:
		return Entry{}, fmt.Errorf("kind %q is not dev, lib, sym or dir: %w", e.Kind, ErrSyntax)
	}
	if e.Kind == KindDev && e.Path != "" && !strings.HasPrefix(e.Path, "/") {
		e.Path = "/dev/" + e.Path
	}
	if err := checkPath(e); err != nil {
		return Entry{}, err
	}
	e.Path = path.Clean(e.Path)
	return e, nil
}

func checkPath(e Entry) error {
	switch {
	case e.Path == "":
		return fmt.Errorf("empty path: %w", ErrSyntax)
	case !path.IsAbs(e.Path):
		return fmt.Errorf("path %q is not absolute: %w", e.Path, ErrSyntax)
	case strings.ContainsRune(e.Path, 0):
		return fmt.Errorf("path holds a NUL: %w", ErrSyntax)
	case slices.Contains(strings.Split(e.Path, "/"), ".."):
		return fmt.Errorf("path %q holds a \"..\" element: %w", e.Path, ErrSyntax)
	case path.Clean(e.Path) == "/":
		return fmt.Errorf("path %q names the root: %w", e.Path, ErrSyntax)
	case e.Kind == KindDev && !strings.HasPrefix(path.Clean(e.Path), "/dev/"):
		return fmt.Errorf("device %q is not below /dev: %w", e.Path, ErrSyntax)
	}
	if _, err := path.Match(e.Path, ""); err != nil {
		return fmt.Errorf("pattern %q: %v: %w", e.Path, err, ErrSyntax)
	}
	return nil
}

// ParseFile reads the entries of the mount spec file at the host path
// file (symlinks followed as the host resolves them), which must be a
// regular file: a FIFO or device node there is refused unopened
// (internal/inroot). [Load] reads files inside a root instead.
func ParseFile(file string) ([]Entry, error) {
	return parseIn(nil, file, file)
}

// HostPath is the host path of file, a path inside root ("" or "/":
// this host), as a name for messages: root joined with file, without
// resolving the links on the way.
func HostPath(root, file string) string {
	return filepath.Join(orRoot(root), file)
}

// baseFiles are the files read without NVIDIA_REQUIRE_JETPACK=csv-mounts=all.
var baseFiles = []string{"devices.csv", "drivers.csv", "l4t.csv"}

// DefaultFiles are the base files in dir, the default of nvidia-ctk cdi
// generate --csv.file (with dir DefaultMountSpecPath).
func DefaultFiles(dir string) []string {
	out := make([]string, 0, len(baseFiles))
	for _, b := range baseFiles {
		out = append(out, filepath.Join(dir, b))
	}
	return out
}

// Files lists the mount spec files of dir, a directory inside root (""
// or "/": this host), sorted: its entries (not recursively) whose name
// ends in ".csv" (any case), except one named ".csv" and directories. dir
// is resolved inside root as [Resolve] resolves paths: a symlink on the
// way, absolute or with "..", never leads out of root (an absolute
// target is read below root). The files are paths inside root (dir
// joined with each name), for [Load] with the same root. A missing dir
// has none.
func Files(root, dir string) ([]string, error) {
	names, err := listDir(orRoot(root), dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("listing mount specs %s in %s: %w", dir, orRoot(root), err)
	}
	var out []string
	for _, e := range names {
		n := e.Name()
		if e.IsDir() || n == ".csv" || !strings.EqualFold(filepath.Ext(n), ".csv") {
			continue
		}
		out = append(out, filepath.Join(dir, n))
	}
	return out, nil
}

// SelectFiles is files as a container whose NVIDIA_REQUIRE_JETPACK is
// requireJetpack gets them: all of them for [MountsAll], else only the
// base files (devices.csv, drivers.csv, l4t.csv).
func SelectFiles(files []string, requireJetpack string) []string {
	if requireJetpack == MountsAll {
		return slices.Clone(files)
	}
	var out []string
	for _, f := range files {
		if slices.Contains(baseFiles, filepath.Base(f)) {
			out = append(out, f)
		}
	}
	return out
}

// Load parses files, paths inside root ("" or "/": this host), in
// order; each is resolved inside root as [Files] resolves its dir, and
// read only if it is a regular file (a FIFO or device node is refused
// unopened). A file that does not exist inside root is skipped. Entries
// and errors name a file by its host path, [HostPath] (root, file).
func Load(root string, files []string) ([]Entry, error) {
	dir, err := openRoot(orRoot(root))
	if err != nil {
		return nil, err
	}
	defer dir.Close()
	var out []Entry
	for _, f := range files {
		es, err := parseIn(dir, f, HostPath(root, f))
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out = append(out, es...)
	}
	return out, nil
}

// IgnoreSymlinks is entries without the sym entries one of patterns
// matches, as nvidia-ctk cdi generate --csv.ignore-pattern: a pattern is
// a path.Match glob against the whole path, or, starting with "**/",
// against its base name.
func IgnoreSymlinks(entries []Entry, patterns []string) []Entry {
	return slices.DeleteFunc(slices.Clone(entries), func(e Entry) bool {
		if e.Kind != KindSym {
			return false
		}
		for _, p := range patterns {
			target := e.Path
			if rest, ok := strings.CutPrefix(p, "**/"); ok {
				p, target = rest, path.Base(e.Path)
			}
			if ok, _ := path.Match(p, target); ok {
				return true
			}
		}
		return false
	})
}
