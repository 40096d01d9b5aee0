package requirement_test

import (
	"fmt"

	"github.com/go-nvc/nvc/nvcontainer/requirement"
)

// Requirements are evaluated against the driver and each selected GPU.
func ExampleCheck() {
	host := requirement.Facts{
		CUDAVersion:   "12.4",
		DriverVersion: "550.54.15",
		Devices:       []requirement.Device{{Arch: "8.0", Brand: "Tesla"}},
	}
	for _, req := range []string{
		"cuda>=12.4 brand=tesla,driver>=470,driver<471",
		"cuda>=12.8",
		"brand=geforce arch>=9.0",
		"cuda>=12.x",
	} {
		fmt.Println(requirement.Check([]string{req}, host))
	}
	// Output:
	// <nil>
	// unsatisfied condition: cuda>=12.8, please update your driver to a newer version, or use an earlier cuda container
	// unsatisfied condition: brand=geforce
	// invalid expression: term "cuda>=12.x" at offset 0 of requirement "cuda>=12.x": version "12.x" is not made of digits and dots
}
