package fstree

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strconv"
	"strings"
)

// Kind is the type of file an [Entry] creates.
type Kind string

// The kinds of entry a tree can hold.
const (
	Dir     Kind = "dir"
	File    Kind = "file"
	Symlink Kind = "symlink"
	Char    Kind = "char"
	FIFO    Kind = "fifo"
	Socket  Kind = "socket"
)

// ErrInvalid is matched by every error Parse returns.
var ErrInvalid = errors.New("invalid tree description")

// Entry is one file to create.
type Entry struct {
	// Kind is what to create.
	Kind Kind
	// Path is relative to the tree's root, slash-separated and clean.
	Path string
	// Mode holds the permission bits; zero means the kind's default
	// (0755 for directories, 0644 for files, 0666 for nodes).
	Mode fs.FileMode
	// Target is a symlink's content, written verbatim.
	Target string
	// Major and Minor number a character device.
	Major, Minor uint32
	// Content is a regular file's data.
	Content []byte
}

// Parse reads a tree description, one entry per line.
func Parse(spec string) ([]Entry, error) {
	var entries []Entry
	for i, line := range strings.Split(spec, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		e, err := parseLine(line)
		if err != nil {
			return nil, fmt.Errorf("%w: line %d %q: %v", ErrInvalid, i+1, line, err)
		}
		entries = append(entries, e)
	}
	return entries, nil
}

func parseLine(line string) (Entry, error) {
	kind, rest, _ := strings.Cut(line, " ")
	p, rest := cutField(rest)
	if p == "" {
		return Entry{}, errors.New("missing path")
	}
	clean, err := cleanPath(p)
	if err != nil {
		return Entry{}, err
	}
	e := Entry{Kind: Kind(kind), Path: clean}
	switch e.Kind {
	case Dir, FIFO, Socket:
		e.Mode, rest, err = optionalMode(rest)
		if err == nil && rest != "" {
			err = fmt.Errorf("unexpected %q", rest)
		}
	case File:
		e.Mode, rest, err = optionalMode(rest)
		if err == nil {
			e.Content, err = content(rest)
		}
	case Symlink:
		e.Target = strings.TrimSpace(rest)
		if e.Target == "" {
			err = errors.New("missing symlink target")
		}
	case Char:
		err = parseChar(&e, rest)
	default:
		err = fmt.Errorf("unknown kind %q", kind)
	}
	return e, err
}

func parseChar(e *Entry, rest string) error {
	maj, rest := cutField(rest)
	min, rest := cutField(rest)
	a, err1 := strconv.ParseUint(maj, 10, 32)
	b, err2 := strconv.ParseUint(min, 10, 32)
	if err := errors.Join(err1, err2); err != nil {
		return fmt.Errorf("device numbers %q %q: %w", maj, min, err)
	}
	e.Major, e.Minor = uint32(a), uint32(b)
	var err error
	e.Mode, rest, err = optionalMode(rest)
	if err == nil && rest != "" {
		err = fmt.Errorf("unexpected %q", rest)
	}
	return err
}

func cutField(s string) (field, rest string) {
	s = strings.TrimLeft(s, " \t")
	i := strings.IndexAny(s, " \t")
	if i < 0 {
		return s, ""
	}
	return s[:i], strings.TrimLeft(s[i:], " \t")
}

func optionalMode(s string) (fs.FileMode, string, error) {
	f, rest := cutField(s)
	if len(f) < 2 || f[0] != '0' || strings.Trim(f, "01234567") != "" {
		return 0, s, nil
	}
	m, err := strconv.ParseUint(f, 8, 32)
	return fs.FileMode(m) & (fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky), rest, err
}

func content(s string) ([]byte, error) {
	if strings.HasPrefix(s, `"`) || strings.HasPrefix(s, "`") {
		u, err := strconv.Unquote(s)
		if err != nil {
			return nil, fmt.Errorf("content %s: %w", s, err)
		}
		return []byte(u), nil
	}
	return []byte(s), nil
}

func cleanPath(p string) (string, error) {
	c := path.Clean(strings.TrimPrefix(p, "/"))
	if c == "." || c == ".." || strings.HasPrefix(c, "../") {
		return "", fmt.Errorf("path %q is not inside the root", p)
	}
	return c, nil
}
