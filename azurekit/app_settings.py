"""Where a local host records the app settings it runs with, for tools pointed at its data."""

APP_SETTINGS_FILE = "app-settings.json"

HOST_URL_FILE = "host-url"
"""The base URL a local host serves its HTTP API on (one line), written once it listens."""
