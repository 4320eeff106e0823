package atomicfile

// NewTempNameForTest is the temp name Write would use for a file named
// name.
func NewTempNameForTest(name string) string { return tempName(name) }
