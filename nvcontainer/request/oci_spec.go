package request

import (
	"slices"

	"github.com/opencontainers/runtime-spec/specs-go"
)

// capSysAdmin in the bounding set is what makes a container "privileged"
// to the runtime hook.
const capSysAdmin = "CAP_SYS_ADMIN"

// Privileged reports whether spec's process holds CAP_SYS_ADMIN in its
// bounding set, the runtime hook's test for a privileged container.
func Privileged(spec *specs.Spec) bool {
	if spec == nil || spec.Process == nil || spec.Process.Capabilities == nil {
		return false
	}
	return slices.Contains(spec.Process.Capabilities.Bounding, capSysAdmin)
}
