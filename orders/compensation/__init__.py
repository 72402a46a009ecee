"""Compensation (S9): undo an order's completed steps, in reverse order, from its log.

The states, who hands over, claims and undoes, and the retry limits are told once in
docs/pipeline.md, "Compensation, in detail".
"""
