package cgroup_test

import (
	"github.com/go-nvc/nvc/internal/cgroup"
)

// Grant a running container read-write access to /dev/nvidiactl (195:255)
// and /dev/nvidia0 (195:0), and take it back if a later step fails. Needs
// root, so it is compiled but not run.
func ExampleCgroup_Allow() {
	pid := 4242 // the container's init, as the runtime reports it
	cg, err := cgroup.Open(pid, nil)
	if err != nil {
		panic(err)
	}
	defer cg.Close()
	undo, err := cg.Allow([]cgroup.Rule{{Major: 195, Minor: 255}, {Major: 195, Minor: 0}})
	if err != nil {
		panic(err)
	}
	if laterStepFailed := false; laterStepFailed {
		_ = undo()
	}
}
