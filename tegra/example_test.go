package tegra_test

import (
	"fmt"
	"strings"

	"github.com/go-nvc/nvc/tegra"
)

// Parse reads a mount spec file: comments and blank lines are skipped, a
// bare dev name means /dev/NAME, and a bad line is an error naming the
// file and line.
func ExampleParse() {
	const drivers = `# JetPack drivers
dev, /dev/nvmap
dev, nvhost-gpu
lib, /usr/lib/aarch64-linux-gnu/tegra/libcuda.so.1.1

sym, /usr/lib/aarch64-linux-gnu/libcuda.so
dir, /usr/lib/aarch64-linux-gnu/tegra-egl
`
	entries, err := tegra.Parse(strings.NewReader(drivers), "drivers.csv")
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, e := range entries {
		fmt.Printf("%s:%d %s %s\n", e.File, e.Line, e.Kind, e.Path)
	}
	_, err = tegra.Parse(strings.NewReader("dev, /dev/nvmap\nlibrary, /usr/lib/libfoo.so\n"), "bad.csv")
	fmt.Println(err)
	// Output:
	// drivers.csv:2 dev /dev/nvmap
	// drivers.csv:3 dev /dev/nvhost-gpu
	// drivers.csv:4 lib /usr/lib/aarch64-linux-gnu/tegra/libcuda.so.1.1
	// drivers.csv:6 sym /usr/lib/aarch64-linux-gnu/libcuda.so
	// drivers.csv:7 dir /usr/lib/aarch64-linux-gnu/tegra-egl
	// bad.csv:2: "library, /usr/lib/libfoo.so": kind "library" is not dev, lib, sym or dir: invalid mount spec
}
