"""Leaf pieces all of the host uses: its error root, Azure's failure texts, host retries."""
