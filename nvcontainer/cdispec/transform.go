package cdispec

import (
	"fmt"
	"path/filepath"
	"strings"

	specs "tags.cncf.io/container-device-interface/specs-go"
)

// TransformRoot rewrites spec's paths under from to the same paths under
// to, as nvidia-ctk cdi transform root does for a spec generated against a
// driver root (/run/nvidia/driver) that the runtime sees elsewhere: the
// host paths of device nodes (Path where HostPath is empty, which is both),
// mounts and hooks, with container false; the container paths of device
// nodes and mounts with container true. A path matches from whole
// components: /run/nvidia/driverx is not under /run/nvidia/driver. from
// and to must be absolute.
func TransformRoot(spec *specs.Spec, from, to string, container bool) error {
	if !filepath.IsAbs(from) || !filepath.IsAbs(to) {
		return fmt.Errorf("%w: transforming root %q to %q: both must be absolute", ErrInvalid, from, to)
	}
	from, to = filepath.Clean(from), filepath.Clean(to)
	move := func(p *string) {
		if *p == "" {
			return
		}
		if rest, ok := underRoot(*p, from); ok {
			*p = filepath.Join(to, rest)
		}
	}
	edit := func(e *specs.ContainerEdits) {
		for _, n := range e.DeviceNodes {
			switch {
			case container:
				move(&n.Path)
			case n.HostPath != "":
				move(&n.HostPath)
			default:
				host := n.Path
				if move(&host); host != n.Path {
					n.HostPath = host
				}
			}
		}
		for _, m := range e.Mounts {
			if container {
				move(&m.ContainerPath)
			} else {
				move(&m.HostPath)
			}
		}
		for _, h := range e.Hooks {
			if !container {
				move(&h.Path)
			}
		}
	}
	edit(&spec.ContainerEdits)
	for i := range spec.Devices {
		edit(&spec.Devices[i].ContainerEdits)
	}
	return nil
}

// underRoot returns p relative to root when p is root or under it.
func underRoot(p, root string) (string, bool) {
	p = filepath.Clean(p)
	if root == "/" {
		return p, true
	}
	if p == root {
		return "/", true
	}
	rest, ok := strings.CutPrefix(p, root+"/")
	return rest, ok
}
