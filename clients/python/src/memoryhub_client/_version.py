"""The client's version: its major number is the server's API version (/api/v1)."""

__version__ = "1.0.0"
API_VERSION = "1"
