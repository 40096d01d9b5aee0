//go:build !linux

package cdispec

import specs "tags.cncf.io/container-device-interface/specs-go"

// hostNodeAttrs leaves n as it is: device nodes are read on Linux only.
func hostNodeAttrs(*specs.DeviceNode) {}
