"""Examples: complete applications built on artifactr.files, which the test suite runs."""
