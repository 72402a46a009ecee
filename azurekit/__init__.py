"""What the app and the local host must agree on with Azure, written once for both.

See docs/fidelity.md, "Rules shared with Azure (``azurekit``)".
"""
