package ns_test

import (
	"fmt"
	"os"

	"github.com/go-nvc/nvc/internal/ns"
)

// Run a function in a container's mount namespace; the container's process
// is PID 4242 here, so the example only compiles.
func ExampleNamespace_Run() {
	target, err := ns.OpenPID("/proc", 4242)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer target.Close()
	err = target.Run(func() error {
		// Paths here resolve in the container's namespace.
		_, err := os.Stat("/etc/os-release")
		return err
	})
	fmt.Println(err)
}

// Without setns, Run still gives the function a thread whose working
// directory and umask are its own.
func ExampleCurrent() {
	err := ns.Current().Run(func() error {
		return os.Chdir("/")
	})
	fmt.Println(err)
	// Output: <nil>
}
