"""Browser tests: Playwright and Chromium against a real server."""
