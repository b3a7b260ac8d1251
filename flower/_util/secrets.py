"""Passwords out of text that may be printed: a DSN in a message, a log line, a report header.

A PostgreSQL password can sit in three places of a connection string, and each is masked as `***`:

- the userinfo of a URI: `postgresql://flower:s3cret@db/runs`;
- a query parameter: `postgresql://flower@db/runs?password=s3cret&sslmode=require`;
- a keyword DSN: `host=db user=flower password=s3cret` (quoted values too: `password='a b'`).

Any key that ends in `password` is masked (`sslpassword` included). The text around is kept as it is.
"""

from __future__ import annotations

import re
from typing import Final

__all__ = ["redact"]

_USERINFO: Final = re.compile(
    r"(?P<head>\b[a-z][a-z0-9+.-]*://[^:/?#@\s]*):(?P<secret>[^\s]*?)@(?=[^@\s/?#]*(?:[/?#\s]|$))",
    re.IGNORECASE,
)
_KEYWORD: Final = re.compile(
    r"(?P<head>\b[a-z_]*password\s*=\s*)(?P<secret>'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"|[^\s&'\"]*)",
    re.IGNORECASE,
)


def redact(text: str) -> str:
    """`text` with every connection-string password replaced by `***` (URI userinfo, query, keywords)."""
    text = _USERINFO.sub(lambda m: f"{m['head']}:***@", text)
    return _KEYWORD.sub(lambda m: f"{m['head']}***", text)
