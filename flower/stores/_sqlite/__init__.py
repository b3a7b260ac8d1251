"""`SqliteSessionStore`: the SDK's `SessionStore` protocol over one SQLite file.

Split by concern: the async store (`store`), its blocking half, one method per store call (`_sql`), the
checks on the database file before SQLite opens it (`_db_file`), and session leases on `flock` (`_flock`).
"""

from .store import SqliteSessionStore

__all__ = ["SqliteSessionStore"]
