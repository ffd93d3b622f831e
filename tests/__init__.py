"""The tests: tests/uqcore, tests/uqlab, tests/app and tests/tools mirror the code; repo-wide
checks at the top."""
