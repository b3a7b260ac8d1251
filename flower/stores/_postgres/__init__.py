"""`PostgresSessionStore`: one store a fleet of runners shares (extra `flower-context[postgres]`, on asyncpg).

Split by concern: the store and the SDK protocol (`store`), its connections, pools and schema
(`_connection`), the protocol's calls as SQL (`_transcripts`), session leases on advisory locks
(`_lease`), the files a session's history points to (`_files`) and their publication and restoration
(`_sync`).
"""

from .store import PostgresSessionStore

__all__ = ["PostgresSessionStore"]
