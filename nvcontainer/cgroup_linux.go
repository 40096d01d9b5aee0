package nvcontainer

import (
	"github.com/go-nvc/nvc/internal/cgroup"
)

// openCgroup finds and opens the container process's device cgroup, seen
// from the caller's (host) mount namespace; nothing when the plan has no
// rules. The cgroup file is read through the pinned process (checked by
// openNamespace), never by its number. Its point is passed by openPoints.
func (a *applier) openCgroup() error {
	if len(a.plan.CgroupRules) == 0 {
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
