"""oxiserve's Python backend stub (the Python half; see docs/design/python-wire.md)."""
