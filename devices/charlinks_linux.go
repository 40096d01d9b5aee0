package devices

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/go-nvc/nvc/driver"
)

// CharLinkOptions change what CreateCharLinks does. A nil *CharLinkOptions
// means defaults.
type CharLinkOptions struct {
	// Roots say where procfs and the nodes (the dev root, standing for
	// /dev) are. Zero: the running host, defaulted by
	// driver.Roots.WithDefaults (the dev root is <driver root>/dev).
	Roots driver.Roots
	// CharDir is where the links go. Empty: <dev root>/char.
	CharDir string
	// All links every node the driver has (as CreateNodes would make them,
	// read from procfs) whether the node exists or not. False: only the
	// NVIDIA character devices present under the dev root.
	All bool
}

// CharLink is one link made: CharDir/<Name> -> Target.
type CharLink struct {
	Name   string `json:"name"`
	Target string `json:"target"`
}

// CreateCharLinks makes the /dev/char/MAJOR:MINOR symlinks of the NVIDIA
// device nodes, which udev does not make for nodes nvidia-modprobe
// creates. systemd resolves a cgroup device rule through /dev/char; without
// the links, a systemd daemon-reload drops the devices from a running
// container's allow list and NVML there fails with "Unknown Error". A
// correct link is left alone, a wrong link or file in its place replaced,
// so it is idempotent. It returns the links made.
func CreateCharLinks(opts *CharLinkOptions) ([]CharLink, error) {
	var o CharLinkOptions
	if opts != nil {
		o = *opts
	}
	o.Roots = o.Roots.WithDefaults()
	if o.CharDir == "" {
		o.CharDir = filepath.Join(o.Roots.Dev, "char")
	}
	nodes, err := charLinkNodes(&o)
	if err != nil {
		return nil, fmt.Errorf("creating /dev/char links: %w", err)
	}
	if err := os.MkdirAll(o.CharDir, 0o755); err != nil {
		return nil, fmt.Errorf("creating /dev/char links: %w", err)
	}
	dfd, err := unix.Open(o.CharDir, unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("creating /dev/char links: %w", &os.PathError{Op: "open", Path: o.CharDir, Err: err})
	}
	defer unix.Close(dfd)
	var made []CharLink
	for _, n := range nodes {
		target, err := filepath.Rel(o.CharDir, filepath.Join(o.Roots.Dev, strings.TrimPrefix(n.Path, "/dev/")))
		if err != nil {
			return made, fmt.Errorf("linking %s: %w", n.Path, err)
		}
		l := CharLink{Name: fmt.Sprintf("%d:%d", n.Major, n.Minor), Target: target}
		changed, err := ensureLink(dfd, l)
		if err != nil {
			return made, fmt.Errorf("linking %s to %s: %w", filepath.Join(o.CharDir, l.Name), n.Path, err)
		}
		if changed {
			made = append(made, l)
		}
	}
	return made, nil
}

// charLinkNodes lists the nodes to link: those the driver has with All,
// else the NVIDIA character devices under the dev root.
func charLinkNodes(o *CharLinkOptions) ([]Node, error) {
	if o.All {
		no := &NodeOptions{Roots: o.Roots}
		want, err := nodesToCreate(no, loadedModules(o.Roots), &NodeReport{})
		nodes := make([]Node, len(want))
		for i, w := range want {
			nodes[i] = w.Node
		}
		return nodes, err
	}
	var nodes []Node
	for _, pat := range []string{"nvidia*", "nvidia-caps/*", "nvidia-caps-imex-channels/*"} {
		matches, err := filepath.Glob(filepath.Join(o.Roots.Dev, pat))
		if err != nil {
			return nil, err
		}
		sort.Strings(matches)
		for _, m := range matches {
			var st unix.Stat_t
			if unix.Lstat(m, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFCHR {
				continue
			}
			rel := strings.TrimPrefix(m, filepath.Clean(o.Roots.Dev)+"/")
			nodes = append(nodes, Node{Path: "/dev/" + rel, Major: unix.Major(st.Rdev), Minor: unix.Minor(st.Rdev)})
		}
	}
	return nodes, nil
}

// ensureLink makes l in the directory dfd unless it is there; a symlink or
// file of that name pointing elsewhere is replaced, a directory refused.
func ensureLink(dfd int, l CharLink) (bool, error) {
	buf := make([]byte, 4096)
	if n, err := unix.Readlinkat(dfd, l.Name, buf); err == nil && string(buf[:n]) == l.Target {
		return false, nil
	}
	var st unix.Stat_t
	err := unix.Fstatat(dfd, l.Name, &st, unix.AT_SYMLINK_NOFOLLOW)
	switch {
	case err == nil && st.Mode&unix.S_IFMT == unix.S_IFDIR:
		return false, fmt.Errorf("%s is a directory", l.Name)
	case err == nil:
		if err := unix.Unlinkat(dfd, l.Name, 0); err != nil {
			return false, os.NewSyscallError("unlinkat", err)
		}
	case err != unix.ENOENT:
		return false, os.NewSyscallError("fstatat", err)
	}
	return true, os.NewSyscallError("symlinkat", unix.Symlinkat(l.Target, dfd, l.Name))
}
