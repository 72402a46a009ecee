"""devhost package."""
