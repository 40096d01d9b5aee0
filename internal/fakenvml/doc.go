// Package fakenvml is a pure-Go NVML for simulated hosts: a
// devices.NVMLInterface that answers like the NVML of a DGX A100, H100, H200
// or B200, with GPU UUIDs that stay the same from run to run, PCI bus ids
// laid out as on the real board, a configurable driver and CUDA version, and
// MIG devices created from profile names.
//
// It needs no cgo, so the simulator (package fakehost, the examples'
// --simulate) builds static. Its boards are go-nvml's DGX mocks
// (boards_gen.go is generated from them), and a cgo-only test compares it,
// call by call through devices.NVMLInterface, with those mocks as package
// nvmlmock wires them, for every board with MIG off and on.
//
// Each call to New builds an independent server; servers are read-only
// after New and safe for concurrent use.
package fakenvml
