"""The client's version. Its major number is the server's API version (memoryhub/api.py's
NinjaAPI `version`, the 1 of /api/v1): a new API version is a new major version; minor and
patch versions add and fix within one. tests/clients/test_schema_drift.py checks the rule."""

__version__ = "1.0.0"
API_VERSION = __version__.split(".")[0]
