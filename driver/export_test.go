package driver

// The in-package tests that the external TestWithoutOpenat2 runs again
// with openat2 denied. That test needs internal/fakehost, which imports
// package devices, which imports this package: it cannot be in-package.
var (
	ResolveInRootTest  = TestResolveInRoot
	SelectionRulesTest = TestSelectionRules
	SelectionWSLTest   = TestSelectionWSL
)
