"""The app as the Python worker sees it: found, checked, loaded, called; imports no other part."""
