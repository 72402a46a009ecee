"""Work loops of the local host: orchestrator episodes, activities, and drain mode."""
