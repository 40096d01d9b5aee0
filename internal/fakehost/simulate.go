package fakehost

import (
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/go-nvc/nvc/internal/fakenvml"
)

// Simulate generates a host of machine (one of fakenvml.Machines()), with
// the GPUs of mig in MIG mode (as [Options].MIG; nil: none), into a new
// temp dir, as the examples' --simulate flags do: device nodes are real
// character devices when the process runs as root (euid 0), plain files
// otherwise. The caller removes h.Root when done; on error nothing is
// left behind. An unknown machine is refused with a message worded for
// the --simulate flag.
func Simulate(machine string, mig map[int][]string) (*Host, error) {
	if !slices.Contains(fakenvml.Machines(), machine) {
		return nil, fmt.Errorf("unknown --simulate machine %q (want one of %s)", machine, strings.Join(fakenvml.Machines(), ", "))
	}
	dir, err := os.MkdirTemp("", "nvc-simulate-")
	if err != nil {
		return nil, err
	}
	h, err := Generate(dir, &Options{Machine: machine, MIG: mig, RealNodes: os.Geteuid() == 0})
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("simulating %s: %w", machine, err)
	}
	return h, nil
}
