"""Where a local host records the app settings it runs with, for tools pointed at its data."""

APP_SETTINGS_FILE = "app-settings.json"
