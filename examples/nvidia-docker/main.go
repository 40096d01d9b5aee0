package main

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"syscall"

	"github.com/go-nvc/nvc/nvcontainer/toolkit"
)

// version is printed by `nvidia-docker version` before docker's own.
const version = "NVIDIA Docker: 2.0.0 (nvc)"

func main() {
	os.Exit(run(os.Args[1:], os.Environ(), os.Stdout, os.Stderr))
}

// run prints nvidia-docker's version line when asked, then replaces the
// process with docker; it returns only when docker cannot be started.
func run(args, env []string, stdout, stderr io.Writer) int {
	cmd := toolkit.NvidiaDocker(args, env)
	if cmd.Version {
		fmt.Fprintln(stdout, version)
	}
	prog, err := exec.LookPath(cmd.Program)
	if err == nil {
		err = syscall.Exec(prog, append([]string{cmd.Program}, cmd.Args...), env)
	}
	fmt.Fprintf(stderr, "nvidia-docker: running %s: %v\n", cmd.Program, err)
	return 1
}
