package cdihook

import (
	"fmt"
	"path"
	"strings"
)

// Link is one symlink to make in the container.
type Link struct {
	// Target is what the link points to, written as given
	// ("libcuda.so.1", "../lib/libfoo.so"); never resolved.
	Target string
	// Path is where the link goes: an absolute path in the container,
	// resolved inside its root.
	Path string
}

// KeptLink is a link not made because the image has something else at
// its path and the link is not a SONAME link (see [CreateSymlinks]).
type KeptLink struct {
	Link
	// Found says what the image has there: "regular file", "directory",
	// "symlink", …
	Found string
}

// SymlinksOptions are what [CreateSymlinks] makes.
type SymlinksOptions struct {
	// Links are the links to make, in order. Nil: none.
	Links []Link
}

// SymlinksResult says what [CreateSymlinks] left as the image had it.
type SymlinksResult struct {
	// Kept lists the links whose path the image's own file keeps, in
	// order. Nil: every link was made (or was already there).
	Kept []KeptLink
}

// ParseLink parses a create-symlinks argument, TARGET::LINK, LINK an
// absolute path in the container other than "/". The link's path is
// cleaned.
func ParseLink(arg string) (Link, error) {
	target, link, ok := strings.Cut(arg, "::")
	if !ok || target == "" {
		return Link{}, fmt.Errorf("parsing link %q: want TARGET::/ABSOLUTE/LINK", arg)
	}
	l, err := Link{Target: target, Path: link}.clean()
	if err != nil {
		return Link{}, fmt.Errorf("parsing link %q: want TARGET::/ABSOLUTE/LINK", arg)
	}
	return l, nil
}

// ParseLinks parses each of args with [ParseLink] and drops the repeats
// of a link to the same target, keeping the order of the first.
func ParseLinks(args []string) ([]Link, error) {
	var out []Link
	seen := map[Link]bool{}
	for _, a := range args {
		l, err := ParseLink(a)
		if err != nil {
			return nil, err
		}
		if !seen[l] {
			seen[l] = true
			out = append(out, l)
		}
	}
	return out, nil
}

// clean returns l with its path cleaned, or an error when l cannot be
// made: an empty target, a relative path or the root itself.
func (l Link) clean() (Link, error) {
	if l.Target == "" || !path.IsAbs(l.Path) || path.Clean(l.Path) == "/" {
		return Link{}, fmt.Errorf("link %q -> %q: want a target and an absolute path other than \"/\"", l.Path, l.Target)
	}
	l.Path = path.Clean(l.Path)
	return l, nil
}
