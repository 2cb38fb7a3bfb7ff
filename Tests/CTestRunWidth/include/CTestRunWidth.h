// Nothing to import: this target only sets the test run's parallel width before swift-testing starts (see
// TestRunWidth.c). The header exists because a C target needs a public include folder.
