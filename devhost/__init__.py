"""The local host: the app's Functions host and Durable extension (docs/local-host.md, "Inside")."""
