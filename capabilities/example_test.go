package capabilities_test

import (
	"fmt"

	"github.com/go-nvc/nvc/capabilities"
)

func ExampleParse() {
	s, err := capabilities.Parse("utility, video")
	if err != nil {
		panic(err)
	}
	fmt.Println(s)
	fmt.Println(s.Has(capabilities.Compute), s.Expand().Has(capabilities.Compute))

	empty, _ := capabilities.Parse("")
	fmt.Println(empty)

	_, err = capabilities.Parse("compute,foo")
	fmt.Println(err)
	// Output:
	// utility,video
	// false true
	// utility
	// parsing driver capabilities "compute,foo": unknown capability "foo"
}

func ExampleSet_String() {
	fmt.Println(capabilities.All)
	fmt.Println(capabilities.Of(capabilities.Utility, capabilities.Compute))
	// Output:
	// compat32,compute,display,graphics,ngx,utility,video
	// compute,utility
}
