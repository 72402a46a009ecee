"""Run the host: assemble, run, serve HTTP, worker processes, CLI; no other part imports it."""
