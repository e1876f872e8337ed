"""The client's version. Its major number is the server's API version (memoryhub/api.py's
NinjaAPI `version`): a new API version is a new major version; minor and patch versions add
and fix within one. tests/clients/test_schema_drift.py checks the rule. 2.0.0: reads are safe
by default; 2.1.0: plain titles for the system part; 2.2.0: `session_id=`, semantic search of
entries (CHANGELOG.md)."""

__version__ = "2.2.0"
API_VERSION = __version__.split(".")[0]
