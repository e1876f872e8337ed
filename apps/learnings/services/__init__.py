"""The one write path for error memory (seed 000) and learnings (seed 001). Modules:
error_records (capture, create, update, expire), error_details (a user's raw text, issue 39),
learning_writes (create, update, promote, status), learning_files (learnings/*.md),
learning_erasure (a user's). Import from this package."""

from apps.learnings.services.error_details import Origin
from apps.learnings.services.error_records import (
    AGENT_ORIGIN,
    clean_json,
    error_capture,
    error_key,
    error_record_create,
    error_record_delete,
    error_record_expire,
    error_record_update,
    errors_expire,
    errors_extend,
    errors_touch,
    normalize_error,
)
from apps.learnings.services.learning_erasure import learnings_erase_user
from apps.learnings.services.learning_files import learnings_files, learnings_import
from apps.learnings.services.learning_writes import (
    Failure,
    error_record_promote,
    learning_capture,
    learning_create,
    learning_delete,
    learning_update,
    learnings_set_status,
    review_status,
)

__all__ = [
    "AGENT_ORIGIN",
    "Failure",
    "Origin",
    "clean_json",
    "error_capture",
    "error_key",
    "error_record_create",
    "error_record_delete",
    "error_record_expire",
    "error_record_promote",
    "error_record_update",
    "errors_expire",
    "errors_extend",
    "errors_touch",
    "learning_capture",
    "learning_create",
    "learning_delete",
    "learning_update",
    "learnings_erase_user",
    "learnings_files",
    "learnings_import",
    "learnings_set_status",
    "normalize_error",
    "review_status",
]
