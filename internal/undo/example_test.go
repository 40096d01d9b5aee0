package undo_test

import (
	"errors"
	"fmt"

	"github.com/go-nvc/nvc/internal/undo"
)

func apply(fail bool) (err error) {
	var u undo.Stack
	defer func() {
		if err != nil {
			err = errors.Join(err, u.Undo())
		}
	}()
	fmt.Println("create dir")
	u.Add(func() error { fmt.Println("remove dir"); return nil })
	fmt.Println("mount file")
	u.Add(func() error { fmt.Println("unmount file"); return nil })
	if fail {
		return errors.New("writing ld.so.cache: disk full")
	}
	u.Discard()
	return nil
}

func Example() {
	fmt.Println(apply(true))
	// Output:
	// create dir
	// mount file
	// unmount file
	// remove dir
	// writing ld.so.cache: disk full
}
