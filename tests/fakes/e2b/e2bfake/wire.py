# SPDX-License-Identifier: MIT
"""Wire encodings E2B uses: Connect envelopes, proto3 JSON details, error bodies."""
import base64
import datetime
import json
import struct

FLAG_COMPRESSED = 0x01
FLAG_END_STREAM = 0x02

# Connect code -> HTTP status of a unary error (PROTOCOL.md §2.3).
CONNECT_HTTP = {
    "canceled": 499, "unknown": 500, "invalid_argument": 400, "deadline_exceeded": 504,
    "not_found": 404, "already_exists": 409, "permission_denied": 403,
    "resource_exhausted": 429, "failed_precondition": 400, "aborted": 409,
    "out_of_range": 400, "unimplemented": 501, "internal": 500, "unavailable": 503,
    "data_loss": 500, "unauthenticated": 401,
}


class ConnectError(Exception):
    """An envd RPC failure: becomes a unary error body or an end-of-stream error."""

    def __init__(self, code, message):
        super().__init__(message)
        self.code = code
        self.message = message


class ApiError(Exception):
    """A control-plane failure: {"code": <status>, "message": ...}."""

    def __init__(self, status, message, error_code=None):
        super().__init__(message)
        self.status = status
        self.message = message
        self.error_code = error_code

    def body(self):
        b = {"code": self.status, "message": self.message}
        if self.error_code:
            b["error_code"] = self.error_code
        return b


def envelope(obj, flags=0):
    data = json.dumps(obj, separators=(",", ":")).encode()
    return struct.pack(">BI", flags, len(data)) + data


def end_stream(error=None):
    body = {}
    if error is not None:
        body["error"] = {"code": error.code, "message": error.message}
    return envelope(body, FLAG_END_STREAM)


def read_envelopes(data):
    """Split a request body into (flags, json) pairs; ValueError when malformed."""
    out, i = [], 0
    while i < len(data):
        if len(data) - i < 5:
            raise ValueError("truncated envelope header")
        flags, n = struct.unpack(">BI", data[i:i + 5])
        if len(data) - i - 5 < n:
            raise ValueError("truncated envelope")
        if flags & FLAG_COMPRESSED:
            raise ValueError("compressed envelopes are not supported")
        try:
            msg = json.loads(data[i + 5:i + 5 + n] or b"{}")
        except ValueError:
            raise ValueError("envelope is not JSON")
        out.append((flags, msg))
        i += 5 + n
    return out


def b64(data):
    return base64.b64encode(data).decode()


def rfc3339(ts):
    dt = datetime.datetime.fromtimestamp(ts, datetime.timezone.utc)
    return dt.strftime("%Y-%m-%dT%H:%M:%S.%f") + "Z"


def as_int(value, default=0):
    """proto3 JSON ints: numbers or strings; ValueError otherwise."""
    if value is None:
        return default
    if isinstance(value, bool):
        raise ValueError("not an integer")
    if isinstance(value, int):
        return value
    if isinstance(value, str):
        return int(value)
    if isinstance(value, float) and value.is_integer():
        return int(value)
    raise ValueError("not an integer")
