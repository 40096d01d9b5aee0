package nvcontainer_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"

	"github.com/go-nvc/nvc/nvcontainer"
)

// An OCI hook at createRuntime (or prestart) applies a plan printed
// earlier as JSON (a dry run, or NewPlan's result kept by the caller) to
// the container whose state the runtime passed in: its PID and its
// rootfs, which at that point is still the host path. It compiles only:
// applying needs root and a container.
func ExamplePlan_Apply() {
	data, err := os.ReadFile("/run/nvc/plan.json")
	if err != nil {
		fmt.Println(err)
		return
	}
	var plan nvcontainer.Plan
	if err := json.Unmarshal(data, &plan); err != nil {
		fmt.Println(err)
		return
	}
	ctr := nvcontainer.Container{PID: 4242, Rootfs: "/run/containerd/io.containerd.runtime.v2.task/k8s.io/abc/rootfs"}
	err = plan.Apply(context.Background(), ctr, nil)
	var ae *nvcontainer.ApplyError
	switch {
	case errors.As(err, &ae) && errors.Is(err, nvcontainer.ErrWrongType):
		// The image has something in the way (a symlink, a directory);
		// nothing was changed.
		fmt.Printf("image conflicts with the driver at %s (step %s)\n", ae.Path, ae.Step)
	case err != nil:
		fmt.Println(err)
	}
}
