"""Developer and operator tools: benches, the load test, the multi-process server, the README's
screenshots. Nothing in the app, the lab or the library imports this package."""
