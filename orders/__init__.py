"""orders package."""
