package nvcontainer

import (
	"os"

	"github.com/go-nvc/nvc/internal/cgroup"
	"github.com/go-nvc/nvc/internal/ns"
)

// openCgroup finds and opens the container process's device cgroup, seen
// from the caller's (host) mount namespace; nothing when the plan has no
// rules, or when the runtime owns the device policy (runtimeOwnsDevices).
// The cgroup file is read through the pinned process (checked by
// openNamespace), never by its number. Its point is passed by openPoints.
func (a *applier) openCgroup() error {
	if len(a.plan.CgroupRules) == 0 || runtimeOwnsDevices() {
		return nil
	}
	f, err := a.proc.open("cgroup")
	if err != nil {
		return pidError(a.proc.pid, "reading its cgroup", err)
	}
	defer f.Close()
	cg, err := cgroup.OpenFrom(f, a.proc.pid, &cgroup.Options{ProcRoot: a.opts.ProcRoot})
	if err != nil {
		return stepError(StepOpen, "", err)
	}
	a.cg = cg
	return nil
}

// allowDevices adds the plan's device rules to the cgroup and records how
// to withdraw exactly those.
func (a *applier) allowDevices() error {
	if a.cg == nil {
		return nil
	}
	if err := a.at(StepCgroup, a.cg.Path()); err != nil {
		return err
	}
	undo, err := a.cg.Allow(cgroupRules(a.plan.CgroupRules))
	if err != nil {
		return stepError(StepCgroup, a.cg.Path(), err)
	}
	a.host.Add(undo)
	return nil
}

func cgroupRules(rules []DeviceRule) []cgroup.Rule {
	out := make([]cgroup.Rule, len(rules))
	for i, r := range rules {
		out[i] = cgroup.Rule{Major: r.Major, Minor: r.Minor, Access: r.Access}
		if r.Type != "" {
			out[i].Type = r.Type[0]
		}
	}
	return out
}

// runtimeOwnsDevices reports whether the caller runs in a user namespace
// other than the initial one (its uid_map or gid_map is not the identity):
// a rootless runtime's hook. The kernel lets no one there change a device
// cgroup: writing devices.allow (v1) and loading and attaching a device
// program (v2) need CAP_SYS_ADMIN (or CAP_BPF) in the initial user
// namespace. A rootless runtime cannot have set a device policy either,
// so the container's devices are governed by their nodes' permissions
// alone, and Apply leaves the rules out instead of failing, as
// libnvidia-container's --no-cgroups does when asked. A process in the
// initial namespace (a runtime run by root, with or without a user
// namespace for the container) adds them.
func runtimeOwnsDevices() bool {
	for _, m := range []string{"/proc/self/uid_map", "/proc/self/gid_map"} {
		data, err := os.ReadFile(m)
		if err == nil && !ns.IdentityMap(string(data)) {
			return true
		}
	}
	return false
}

// DeviceRulesLeftToRuntime reports whether Apply, called from this
// process, leaves p's device cgroup rules to the runtime: p has some and
// the caller runs in a user namespace other than the initial one (a
// rootless runtime's hook), where the kernel lets no one change a device
// cgroup (see the package doc, "User namespaces and rootless runtimes").
// Apply skips them without an error; a caller that reports what it did
// (the CLI's and the hook's logs) says so with this.
func (p *Plan) DeviceRulesLeftToRuntime() bool {
	return len(p.CgroupRules) > 0 && runtimeOwnsDevices()
}
