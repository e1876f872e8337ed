"""JSON as the API and the MCP tools answer it."""

from datetime import datetime
from typing import Any

from ninja.responses import NinjaJSONEncoder


class MicrosecondEncoder(NinjaJSONEncoder):
    """Django's encoder cuts datetimes to milliseconds; stored times have microseconds."""

    def default(self, o: Any) -> Any:  # Any: JSONEncoder.default's own signature
        if isinstance(o, datetime):
            return o.isoformat().replace("+00:00", "Z")
        return super().default(o)
