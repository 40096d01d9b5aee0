package tegra

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	securejoin "github.com/cyphar/filepath-securejoin"
	"github.com/go-nvc/nvc/driver"
	"github.com/go-nvc/nvc/internal/tegrahost"
	"golang.org/x/sys/unix"
)

// ReleaseFile is the L4T release file; its presence marks a Tegra host,
// and CSV mode mounts it into the container.
const ReleaseFile = tegrahost.ReleaseFile

// maxLinks bounds a symlink chain, as the kernel's MAXSYMLINKS.
const maxLinks = 40

// IsTegra reports whether the host roots describe is a Tegra system, as
// the toolkit's platform detection tells one: roots.Driver's
// /etc/nv_tegra_release is a regular file, or the SoC family in roots.Sys
// (devices/soc0/family; sysfs is the running kernel's) starts with
// "tegra" in any case ("Tegra", "tegra234"). Each file is read inside its
// root, at most 64 KiB. Empty roots take their defaults. It is the
// module's one rule (internal/tegrahost), which devices' --load-kmods
// also asks. The reason says which.
func IsTegra(roots driver.Roots) (bool, string) {
	roots = roots.WithDefaults()
	return tegrahost.IsTegra(roots.Driver, roots.Sys)
}

// CSVMode reports whether the host roots describe is configured in CSV
// mode: a Tegra host ([IsTegra]) whose procfs (roots.Proc) has no
// driver/nvidia. It is the one rule of nvidia-container-cli, the
// runtime's auto mode and cdi generate's auto mode. The toolkit asks
// instead whether NVML loads; a Tegra host whose GPU the nvidia driver
// serves (Thor) has both, and is not in CSV mode. Callers ask at every
// container start: the stat that answers on a discrete-GPU host comes
// first. The reason says why.
func CSVMode(roots driver.Roots) (bool, string) {
	roots = roots.WithDefaults()
	proc := filepath.Join(roots.Proc, "driver/nvidia")
	if _, err := os.Stat(proc); err == nil {
		return false, proc + " exists"
	}
	ok, why := IsTegra(roots)
	if !ok {
		return false, why
	}
	return true, why + ", no " + proc
}

// Release is the L4T release in root's /etc/nv_tegra_release (symlinks
// followed inside root, at most 64 KiB read), as
// "MAJOR.MINOR.PATCH" ("36.3.0" for "# R36 (release), REVISION: 3.0, …").
func Release(root string) (string, error) {
	root = orRoot(root)
	f := filepath.Join(root, ReleaseFile)
	b, err := tegrahost.ReadInRoot(root, ReleaseFile)
	if err != nil {
		return "", fmt.Errorf("reading %s: %w", f, err)
	}
	first, _, _ := strings.Cut(string(b), "\n")
	rel, ok := parseRelease(first)
	if !ok {
		return "", fmt.Errorf("%s: %q is not \"# R<major> (release), REVISION: <minor>.<patch>\"", f, first)
	}
	return rel, nil
}

// parseRelease reads "# R<major> (release), REVISION: <minor>.<patch>" at
// the start of line (decimal numbers; anything may follow). By hand, not
// with a regular expression: this package is linked into the CLI, and a
// package-level regexp is compiled at every start of it.
func parseRelease(line string) (string, bool) {
	rest, ok := strings.CutPrefix(line, "# R")
	major, rest, okMajor := leadingDigits(rest)
	rest, okText := strings.CutPrefix(rest, " (release), REVISION: ")
	minor, rest, okMinor := leadingDigits(rest)
	rest, okDot := strings.CutPrefix(rest, ".")
	patch, _, okPatch := leadingDigits(rest)
	if !ok || !okMajor || !okText || !okMinor || !okDot || !okPatch {
		return "", false
	}
	return major + "." + minor + "." + patch, true
}

// leadingDigits splits s after its leading ASCII digits, of which there
// must be one at least.
func leadingDigits(s string) (string, string, bool) {
	i := 0
	for i < len(s) && '0' <= s[i] && s[i] <= '9' {
		i++
	}
	return s[:i], s[i:], i > 0
}

// Node is a device node to give the container.
type Node struct {
	// Path is the node's path in the container (the entry's, a match of
	// its pattern); Source the host node it was found at.
	Path, Source string
	Major, Minor uint32
	// Mode is the host node's permission bits.
	Mode fs.FileMode
	// Entry is the line that named it.
	Entry Entry
}

// File is a file or directory to bind into the container.
type File struct {
	// Path is where it goes in the container; Source the host path (no
	// symlink: the chain was followed inside the root).
	Path, Source string
	// Dir is set for a directory (a dir entry), unset for a regular file.
	Dir bool
	// Entry is the line that named it (Kind lib for the release file).
	Entry Entry
}

// Link is a symlink to create in the container: Path holds Target,
// verbatim.
type Link struct {
	Path, Target string
	Entry        Entry
}

// Mounts is what the entries name on one host.
type Mounts struct {
	Nodes []Node
	Files []File
	Links []Link
	// Warnings name the entries that matched nothing usable.
	Warnings []string
}

// Resolve finds entries on the host roots describe, in entry order, each
// container path once (the first entry wins): patterns are expanded, a
// dev entry must match character devices below roots.Dev, a lib entry
// regular files, a dir entry directories; a sym entry's chain of links is
// followed to a regular file, which is mounted, and its links are made.
// Symlinks are followed inside the root: an absolute target is read
// below roots.Driver, and ".." never climbs out of it. roots.Driver's
// /etc/nv_tegra_release, when it is a file, is mounted last, as the
// toolkit does. What is missing or of the wrong type is a warning.
func Resolve(entries []Entry, roots driver.Roots) (*Mounts, error) {
	r := &resolver{roots: roots.WithDefaults(), m: &Mounts{}, seen: map[string]bool{}}
	for _, e := range entries {
		if err := r.entry(e); err != nil {
			return nil, err
		}
	}
	rel := Entry{Kind: KindLib, Path: ReleaseFile}
	if f, ok := r.file(ReleaseFile); ok {
		r.addFile(File{Path: ReleaseFile, Source: f, Entry: rel})
	}
	return r.m, nil
}

type resolver struct {
	roots driver.Roots
	m     *Mounts
	seen  map[string]bool
}

func (r *resolver) warn(e Entry, why string) {
	r.m.Warnings = append(r.m.Warnings, fmt.Sprintf("%s:%d: %s: %s", e.File, e.Line, e, why))
}

func (r *resolver) entry(e Entry) error {
	root := r.roots.Driver
	if e.Kind == KindDev {
		root = r.roots.Dev
	}
	matches, err := r.glob(root, e)
	if err != nil {
		return err
	}
	if len(matches) == 0 {
		r.warn(e, "not found")
	}
	for _, p := range matches {
		switch e.Kind {
		case KindDev:
			r.node(e, p)
		case KindDir:
			r.dir(e, p)
		default:
			r.chain(e, p)
		}
	}
	return nil
}

// glob is the container paths e's pattern matches below root (for a dev
// entry, root stands for /dev), sorted.
func (r *resolver) glob(root string, e Entry) ([]string, error) {
	p := e.Path
	if e.Kind == KindDev {
		p = strings.TrimPrefix(p, "/dev")
	}
	if !hasMeta(p) {
		if _, err := os.Lstat(filepath.Join(root, p)); err != nil {
			return nil, nil
		}
		return []string{e.Path}, nil
	}
	ms, err := filepath.Glob(filepath.Join(root, p))
	if err != nil {
		return nil, fmt.Errorf("%s:%d: %w", e.File, e.Line, err)
	}
	var out []string
	for _, m := range ms {
		rel, err := filepath.Rel(root, m)
		if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
			continue
		}
		if e.Kind == KindDev {
			rel = "dev/" + rel
		}
		out = append(out, "/"+filepath.ToSlash(rel))
	}
	return out, nil
}

func hasMeta(p string) bool { return strings.ContainsAny(p, `*?[\`) }

func (r *resolver) node(e Entry, p string) {
	host, err := securejoin.SecureJoin(r.roots.Dev, strings.TrimPrefix(p, "/dev"))
	if err != nil {
		r.warn(e, err.Error())
		return
	}
	var st unix.Stat_t
	if err := unix.Stat(host, &st); err != nil {
		r.warn(e, fmt.Sprintf("%s: %v", p, err))
		return
	}
	if st.Mode&unix.S_IFMT != unix.S_IFCHR {
		r.warn(e, p+" is not a character device")
		return
	}
	if r.seen[p] {
		return
	}
	r.seen[p] = true
	r.m.Nodes = append(r.m.Nodes, Node{Path: p, Source: host, Major: unix.Major(st.Rdev), Minor: unix.Minor(st.Rdev),
		Mode: fs.FileMode(st.Mode & 0o777), Entry: e})
}

func (r *resolver) dir(e Entry, p string) {
	host, err := securejoin.SecureJoin(r.roots.Driver, p)
	if err != nil {
		r.warn(e, err.Error())
		return
	}
	if fi, err := os.Stat(host); err != nil || !fi.IsDir() {
		r.warn(e, p+" is not a directory")
		return
	}
	r.addFile(File{Path: p, Source: host, Dir: true, Entry: e})
}

// chain follows p's links inside the root: the final regular file is
// mounted at its own path; for a sym entry each link is also made.
func (r *resolver) chain(e Entry, p string) {
	links, final, err := r.follow(p)
	if err != nil {
		r.warn(e, err.Error())
		return
	}
	host := filepath.Join(r.roots.Driver, final)
	if fi, err := os.Lstat(host); err != nil || !fi.Mode().IsRegular() {
		r.warn(e, fmt.Sprintf("%s resolves to %s, not a regular file", p, final))
		return
	}
	r.addFile(File{Path: final, Source: host, Entry: e})
	if e.Kind != KindSym {
		return
	}
	for _, l := range links {
		if !r.seen["link:"+l.Path] && !r.seen[l.Path] {
			r.seen["link:"+l.Path] = true
			l.Entry = e
			r.m.Links = append(r.m.Links, l)
		}
	}
}

// follow resolves p inside the root: the links passed on the way (each
// at its container path, with its content) and the final path, whose
// directories are resolved and which is not a symlink.
func (r *resolver) follow(p string) ([]Link, string, error) {
	var links []Link
	for range maxLinks {
		dir, err := r.inRoot(path.Dir(p))
		if err != nil {
			return nil, "", err
		}
		cur := path.Join(dir, path.Base(p))
		fi, err := os.Lstat(filepath.Join(r.roots.Driver, cur))
		if err != nil {
			return nil, "", fmt.Errorf("%s: %w", cur, fs.ErrNotExist)
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			return links, cur, nil
		}
		target, err := os.Readlink(filepath.Join(r.roots.Driver, cur))
		if err != nil {
			return nil, "", err
		}
		links = append(links, Link{Path: cur, Target: target})
		p = target
		if !path.IsAbs(target) {
			p = path.Join(path.Dir(cur), target)
		}
	}
	return nil, "", fmt.Errorf("%s: too many levels of symbolic links", p)
}

// inRoot is container path p with every symlink resolved inside the root.
func (r *resolver) inRoot(p string) (string, error) {
	host, err := securejoin.SecureJoin(r.roots.Driver, p)
	if err != nil {
		return "", err
	}
	rel, err := filepath.Rel(r.roots.Driver, host)
	if err != nil || strings.HasPrefix(rel, "..") {
		return "", fmt.Errorf("%s resolves outside the root", p)
	}
	return path.Clean("/" + filepath.ToSlash(rel)), nil
}

// file is the host path of container path p when it resolves, inside the
// root, to a regular file.
func (r *resolver) file(p string) (string, bool) {
	_, final, err := r.follow(p)
	if err != nil {
		return "", false
	}
	host := filepath.Join(r.roots.Driver, final)
	fi, err := os.Lstat(host)
	return host, err == nil && fi.Mode().IsRegular()
}

func (r *resolver) addFile(f File) {
	if r.seen[f.Path] {
		return
	}
	r.seen[f.Path] = true
	r.m.Files = append(r.m.Files, f)
}

// ErrNotTegra is matched by the error of CSV mode on a host that has
// none of the mount spec files it reads.
var ErrNotTegra = errors.New("not a Tegra host")
