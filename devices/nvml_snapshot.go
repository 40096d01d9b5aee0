package devices

import (
	"errors"
	"fmt"
)

// NVMLSnapshot is every answer discovery (Discover) and package driver
// (driver.Open) ask an NVMLInterface for, taken once by TakeNVMLSnapshot,
// so that a process without NVML of its own (a build without cgo) can be
// served by a helper process that has it: the helper writes the snapshot
// as JSON, the caller reads it back and asks [NVMLSnapshot.Interface].
// A call the snapshot did not take answers an error.
type NVMLSnapshot struct {
	// DriverVersion and CUDADriverVersion are SystemDriverVersion's and
	// SystemCUDADriverVersion's answers.
	DriverVersion     *NVMLAnswer[string] `json:"driverVersion,omitempty"`
	CUDADriverVersion *NVMLAnswer[int]    `json:"cudaDriverVersion,omitempty"`
	// DeviceCountError is DeviceCount's error; without one, the count is
	// len(Devices).
	DeviceCountError *NVMLError `json:"deviceCountError,omitempty"`
	// Devices are the GPUs, by NVML index.
	Devices []NVMLDeviceSnapshot `json:"devices,omitempty"`
}

// NVMLDeviceSnapshot is a GPU's answers, or a MIG device's (which has
// only the UUID, Name and the instance answers).
type NVMLDeviceSnapshot struct {
	// HandleError is DeviceByIndex's (MIGDeviceByIndex's) error; nothing
	// else is asked of a device without a handle.
	HandleError       *NVMLError              `json:"handleError,omitempty"`
	MinorNumber       *NVMLAnswer[int]        `json:"minor,omitempty"`
	UUID              *NVMLAnswer[string]     `json:"uuid,omitempty"`
	PCIInfo           *NVMLAnswer[PCIAddress] `json:"pci,omitempty"`
	Name              *NVMLAnswer[string]     `json:"name,omitempty"`
	Brand             *NVMLAnswer[string]     `json:"brand,omitempty"`
	Architecture      *NVMLAnswer[string]     `json:"arch,omitempty"`
	ComputeCapability *NVMLAnswer[[2]int]     `json:"computeCapability,omitempty"`
	// MIGMode is current and pending.
	MIGMode           *NVMLAnswer[[2]bool] `json:"migMode,omitempty"`
	MaxMIGDeviceCount *NVMLAnswer[int]     `json:"maxMIGDeviceCount,omitempty"`
	// MIGDevices are MIGDeviceByIndex 0, 1, … up to the first that had no
	// handle (kept, with its HandleError), asked when MIG is on now.
	MIGDevices        []NVMLDeviceSnapshot        `json:"migDevices,omitempty"`
	GPUInstanceID     *NVMLAnswer[int]            `json:"gi,omitempty"`
	ComputeInstanceID *NVMLAnswer[int]            `json:"ci,omitempty"`
	Attributes        *NVMLAnswer[NVMLAttributes] `json:"attributes,omitempty"`
}

// NVMLAnswer is one call's value or error.
type NVMLAnswer[T any] struct {
	Value T          `json:"value"`
	Error *NVMLError `json:"error,omitempty"`
}

// NVMLError is a failed call in an NVMLSnapshot: its text, and its kind
// when it is one discovery treats as an answer.
type NVMLError struct {
	// Kind is NVMLErrNotSupported, NVMLErrNotFound or "" (another
	// failure).
	Kind string `json:"kind,omitempty"`
	Text string `json:"text"`
}

// NVMLError kinds: the error matches ErrNVMLNotSupported or
// ErrNVMLNotFound.
const (
	NVMLErrNotSupported = "not-supported"
	NVMLErrNotFound     = "not-found"
)

func (e *NVMLError) Error() string { return e.Text }

// Unwrap gives the sentinel of e's kind.
func (e *NVMLError) Unwrap() error {
	switch e.Kind {
	case NVMLErrNotSupported:
		return ErrNVMLNotSupported
	case NVMLErrNotFound:
		return ErrNVMLNotFound
	}
	return nil
}

// snapErr records err; nil stays nil.
func snapErr(err error) *NVMLError {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, ErrNVMLNotSupported):
		return &NVMLError{Kind: NVMLErrNotSupported, Text: err.Error()}
	case errors.Is(err, ErrNVMLNotFound):
		return &NVMLError{Kind: NVMLErrNotFound, Text: err.Error()}
	}
	return &NVMLError{Text: err.Error()}
}

func answer[T any](v T, err error) *NVMLAnswer[T] {
	return &NVMLAnswer[T]{Value: v, Error: snapErr(err)}
}

// errNotTaken answers a call the snapshot did not take.
var errNotTaken = errors.New("not in the NVML snapshot")

// get replays a: its value and error, or errNotTaken.
func get[T any](a *NVMLAnswer[T]) (T, error) {
	if a == nil {
		var zero T
		return zero, errNotTaken
	}
	if a.Error != nil {
		return a.Value, a.Error
	}
	return a.Value, nil
}

// TakeNVMLSnapshot asks lib, between Init and Shutdown, every question
// Discover and driver.Open ask, and records the answers, errors included
// (the kinds ErrNVMLNotSupported and ErrNVMLNotFound kept). Only Init's and
// Shutdown's errors fail it.
func TakeNVMLSnapshot(lib NVMLInterface) (s *NVMLSnapshot, err error) {
	if err := lib.Init(); err != nil {
		return nil, fmt.Errorf("initialising NVML: %w", err)
	}
	defer func() {
		if serr := lib.Shutdown(); serr != nil && err == nil {
			s, err = nil, fmt.Errorf("shutting NVML down: %w", serr)
		}
	}()
	s = &NVMLSnapshot{
		DriverVersion:     answer(lib.SystemDriverVersion()),
		CUDADriverVersion: answer(lib.SystemCUDADriverVersion()),
	}
	n, err := lib.DeviceCount()
	if err != nil {
		s.DeviceCountError = snapErr(err)
		return s, nil
	}
	s.Devices = make([]NVMLDeviceSnapshot, n)
	for i := range s.Devices {
		d, err := lib.DeviceByIndex(i)
		if s.Devices[i].HandleError = snapErr(err); err == nil {
			s.Devices[i].takeGPU(d)
		}
	}
	return s, nil
}

func (s *NVMLDeviceSnapshot) takeGPU(d NVMLDevice) {
	s.MinorNumber = answer(d.MinorNumber())
	s.UUID = answer(d.UUID())
	s.PCIInfo = answer(d.PCIInfo())
	s.Name = answer(d.Name())
	s.Brand = answer(d.Brand())
	s.Architecture = answer(d.Architecture())
	maj, minor, err := d.CUDAComputeCapability()
	s.ComputeCapability = answer([2]int{maj, minor}, err)
	cur, pending, err := d.MIGMode()
	s.MIGMode = answer([2]bool{cur, pending}, err)
	if err != nil {
		return
	}
	n, err := d.MaxMIGDeviceCount()
	s.MaxMIGDeviceCount = answer(n, err)
	if err != nil || !cur {
		return
	}
	for k := range n {
		h, err := d.MIGDeviceByIndex(k)
		m := NVMLDeviceSnapshot{HandleError: snapErr(err)}
		if err == nil {
			m.takeMIG(h)
		}
		s.MIGDevices = append(s.MIGDevices, m)
		if errors.Is(err, ErrNVMLNotFound) {
			break
		}
	}
}

func (s *NVMLDeviceSnapshot) takeMIG(h NVMLDevice) {
	s.GPUInstanceID = answer(h.GPUInstanceID())
	s.ComputeInstanceID = answer(h.ComputeInstanceID())
	s.UUID = answer(h.UUID())
	s.Name = answer(h.Name())
	s.Attributes = answer(h.Attributes())
}

// Interface returns an NVMLInterface that answers from s: Init and
// Shutdown do nothing, every other call gives the recorded value and
// error (errors match ErrNVMLNotSupported and ErrNVMLNotFound as the
// originals did), and a call s did not take fails.
func (s *NVMLSnapshot) Interface() NVMLInterface { return snapshotNVML{s} }

type snapshotNVML struct{ s *NVMLSnapshot }

func (snapshotNVML) Init() error     { return nil }
func (snapshotNVML) Shutdown() error { return nil }

func (n snapshotNVML) SystemDriverVersion() (string, error) { return get(n.s.DriverVersion) }
func (n snapshotNVML) SystemCUDADriverVersion() (int, error) {
	return get(n.s.CUDADriverVersion)
}

func (n snapshotNVML) DeviceCount() (int, error) {
	if n.s.DeviceCountError != nil {
		return 0, n.s.DeviceCountError
	}
	return len(n.s.Devices), nil
}

func (n snapshotNVML) DeviceByIndex(i int) (NVMLDevice, error) {
	return deviceAt(n.s.Devices, i)
}

func deviceAt(ds []NVMLDeviceSnapshot, i int) (NVMLDevice, error) {
	if i < 0 || i >= len(ds) {
		return nil, fmt.Errorf("device %d: %w", i, errNotTaken)
	}
	if e := ds[i].HandleError; e != nil {
		return nil, e
	}
	return snapshotDevice{&ds[i]}, nil
}

type snapshotDevice struct{ d *NVMLDeviceSnapshot }

func (s snapshotDevice) MinorNumber() (int, error)           { return get(s.d.MinorNumber) }
func (s snapshotDevice) UUID() (string, error)               { return get(s.d.UUID) }
func (s snapshotDevice) PCIInfo() (PCIAddress, error)        { return get(s.d.PCIInfo) }
func (s snapshotDevice) Name() (string, error)               { return get(s.d.Name) }
func (s snapshotDevice) Brand() (string, error)              { return get(s.d.Brand) }
func (s snapshotDevice) Architecture() (string, error)       { return get(s.d.Architecture) }
func (s snapshotDevice) MaxMIGDeviceCount() (int, error)     { return get(s.d.MaxMIGDeviceCount) }
func (s snapshotDevice) GPUInstanceID() (int, error)         { return get(s.d.GPUInstanceID) }
func (s snapshotDevice) ComputeInstanceID() (int, error)     { return get(s.d.ComputeInstanceID) }
func (s snapshotDevice) Attributes() (NVMLAttributes, error) { return get(s.d.Attributes) }

func (s snapshotDevice) CUDAComputeCapability() (int, int, error) {
	v, err := get(s.d.ComputeCapability)
	return v[0], v[1], err
}

func (s snapshotDevice) MIGMode() (bool, bool, error) {
	v, err := get(s.d.MIGMode)
	return v[0], v[1], err
}

func (s snapshotDevice) MIGDeviceByIndex(i int) (NVMLDevice, error) {
	return deviceAt(s.d.MIGDevices, i)
}
