package nvcontainer

import (
	"fmt"
	"path"
	"strings"
)

// mountOptions are the options a plan's mounts and tmpfs may carry.
var mountOptions = map[string]bool{"ro": true, "nosuid": true, "nodev": true, "noexec": true}

// checkPlan finds what makes p impossible to apply, before anything is
// opened or changed.
func checkPlan(p *Plan, ctr Container) *ApplyError {
	if p == nil {
		return invalid("", "nil plan")
	}
	if p.Version != PlanVersion {
		return invalid("", fmt.Sprintf("plan version %d, want %d", p.Version, PlanVersion))
	}
	if ctr.Rootfs == "" {
		return invalid("", fmt.Sprintf("container %+v: need a rootfs", ctr))
	}
	if err := checkContainer(p, ctr); err != nil {
		return err
	}
	for _, t := range p.Tmpfs {
		if err := checkTmpfs(t); err != nil {
			return err
		}
	}
	for _, m := range p.Mounts {
		if err := checkMount(m); err != nil {
			return err
		}
	}
	return checkRest(p)
}

// checkContainer checks ctr's Mode and PID, as far as that needs no
// look at the process (pinProcess does the rest): only ModeRootfsOnly
// goes without a process, and asks for none.
func checkContainer(p *Plan, ctr Container) *ApplyError {
	switch ctr.Mode {
	case ModeRootfsOnly:
		if ctr.PID != 0 {
			return checkPID(ctr.PID, "rootfs-only mode takes no process")
		}
		if len(p.CgroupRules) > 0 {
			return &ApplyError{Step: StepCheck, Err: fmt.Errorf("%d device cgroup rules: %w", len(p.CgroupRules), ErrNoProcess), kind: ErrNoProcess}
		}
		return nil
	case ModeProcess, ModeStandalone:
	default:
		return invalid("", fmt.Sprintf("container mode %q", ctr.Mode))
	}
	switch {
	case ctr.PID == 0:
		return checkPID(0, "names no process (rootfs-only mode is Container.Mode ModeRootfsOnly)")
	case ctr.PID < 0 || ctr.PID > pidMaxLimit:
		return checkPID(ctr.PID, fmt.Sprintf("out of range 1 to %d", pidMaxLimit))
	}
	return nil
}

// pidMaxLimit is the kernel's PID_MAX_LIMIT on 64-bit, the largest
// pid_max can be; it bounds a pid where pid_max cannot be read.
const pidMaxLimit = 1 << 22

func checkPID(pid int, why string) *ApplyError {
	return &ApplyError{Step: StepCheck, Err: fmt.Errorf("container pid %d: %s: %w", pid, why, ErrInvalidPID), kind: ErrInvalidPID}
}

func checkTmpfs(t Tmpfs) *ApplyError {
	if err := checkTarget(t.Target, t.Options); err != nil {
		return err
	}
	for _, f := range t.Files {
		if !inside(t.Target, path.Join(t.Target, f.Name)) {
			return invalid(t.Target, fmt.Sprintf("tmpfs file %q is not below the tmpfs", f.Name))
		}
	}
	for _, m := range t.Mounts {
		if err := checkMount(m); err != nil {
			return err
		}
		if !inside(t.Target, m.Target) {
			return invalid(m.Target, fmt.Sprintf("mount is not below its tmpfs %q", t.Target))
		}
	}
	return nil
}

func checkMount(m Mount) *ApplyError {
	if err := checkTarget(m.Target, m.Options); err != nil {
		return err
	}
	if m.Source == "" || !path.IsAbs(m.Source) {
		return invalid(m.Target, fmt.Sprintf("source %q is not an absolute host path", m.Source))
	}
	if m.Kind == MountDevice && m.Device == nil {
		return invalid(m.Target, "device mount without a device number")
	}
	return nil
}

func checkTarget(target string, options []string) *ApplyError {
	if target == "" || path.Clean("/"+target) == "/" {
		return invalid(target, "target names no entry below the rootfs")
	}
	for _, o := range options {
		if !mountOptions[o] {
			return invalid(target, fmt.Sprintf("unknown mount option %q", o))
		}
	}
	return nil
}

func checkRest(p *Plan) *ApplyError {
	for _, m := range p.Mounts {
		if _, ok := p.imagePath(m); m.Kind == MountCompat && !ok {
			return invalid(m.Target, fmt.Sprintf("cuda-compat mount of %q with no path inside the rootfs", m.Source))
		}
	}
	for _, s := range p.Symlinks {
		if s.Target == "" || path.Clean("/"+s.Path) == "/" {
			return invalid(s.Path, fmt.Sprintf("symlink to %q", s.Target))
		}
	}
	for _, r := range p.CgroupRules {
		if (r.Type != "c" && r.Type != "b" && r.Type != "") || strings.Trim(r.Access, "rwm") != "" {
			return invalid("", fmt.Sprintf("device cgroup rule %+v", r))
		}
	}
	return nil
}

// inside reports whether p lies strictly below dir (both cleaned as
// absolute paths).
func inside(dir, p string) bool {
	dir, p = path.Clean("/"+dir), path.Clean("/"+p)
	return strings.HasPrefix(p, strings.TrimSuffix(dir, "/")+"/")
}

func invalid(target, why string) *ApplyError {
	return &ApplyError{Step: StepCheck, Path: target, Err: fmt.Errorf("%s: %w", why, ErrInvalidPlan), kind: ErrInvalidPlan}
}

// imagePath is where a cuda-compat mount's source lies in the rootfs:
// ImagePath, or, in a plan written before that field, Source below the
// rootfs the plan was made for.
func (p *Plan) imagePath(m Mount) (string, bool) {
	if m.ImagePath != "" {
		return m.ImagePath, path.IsAbs(m.ImagePath)
	}
	root := strings.TrimSuffix(path.Clean(p.Container.Rootfs), "/")
	rel, ok := strings.CutPrefix(m.Source, root+"/")
	return "/" + rel, ok && p.Container.Rootfs != ""
}
