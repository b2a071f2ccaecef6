"""The fuzzing harness (issue 9): hypothesis strategies and the tests that drive them."""
