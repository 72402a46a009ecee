"""Where a local host records the app settings it runs with, for tools pointed at its data.

The local host writes the settings in force (``local.settings.json`` keys, with the
environment's values) to :data:`APP_SETTINGS_FILE` in its data folder; the operator CLI,
given the same folder, reads them, as an operator on Azure reads the Function App's
settings. Both import the name from here.
"""

APP_SETTINGS_FILE = "app-settings.json"
"""File of a local host's data folder naming the app settings the host runs with."""
