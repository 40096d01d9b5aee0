//go:build cgo

package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"syscall"

	"github.com/go-nvc/nvc/devices"
	"github.com/go-nvc/nvc/driver"
)

func main() {
	out, err := privateStdout()
	if err == nil {
		err = run(os.Args[1:], out)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "nvc-nvml: %v\n", err)
		os.Exit(1)
	}
}

// privateStdout moves stdout to a descriptor of its own and points
// descriptor 1 at stderr, so that whatever the library prints does not
// mix with the snapshot.
func privateStdout() (*os.File, error) {
	fd, err := syscall.Dup(1)
	if err != nil {
		return nil, fmt.Errorf("duplicating stdout: %w", err)
	}
	syscall.CloseOnExec(fd)
	if err := syscall.Dup3(2, 1, 0); err != nil {
		return nil, fmt.Errorf("redirecting stdout to stderr: %w", err)
	}
	return os.NewFile(uintptr(fd), "stdout"), nil
}

// run loads NVML as args say, once the process has no privileges left,
// and writes its snapshot to stdout.
func run(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("nvc-nvml", flag.ContinueOnError)
	fd := fs.Int("fd", -1, "load the library open at descriptor `N`")
	root := fs.String("root", "", "the driver root `DIR` (default /)")
	lib := fs.String("library", "", "the library's `PATH` inside the driver root")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 0 {
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if *fd >= 0 && *fd != 3 {
		return fmt.Errorf("--fd=%d: only descriptor 3 is kept (every descriptor above 3 is closed at start)", *fd)
	}
	if *fd >= 0 && (*root != "" || *lib != "") {
		return fmt.Errorf("--fd cannot be combined with --root or --library")
	}
	if err := checkNoPrivileges(); err != nil {
		return err
	}
	var f *os.File
	if *fd >= 0 {
		if f = os.NewFile(uintptr(*fd), fmt.Sprintf("descriptor %d", *fd)); f == nil {
			return fmt.Errorf("--fd=%d: not a descriptor", *fd)
		}
	}
	api, unload, err := devices.LoadNVML(&devices.Options{Roots: driver.Roots{Driver: *root}, NVMLLibrary: *lib}, f)
	if err != nil {
		return err
	}
	defer unload()
	s, err := devices.TakeNVMLSnapshot(api)
	if err != nil {
		return err
	}
	return json.NewEncoder(stdout).Encode(s)
}
