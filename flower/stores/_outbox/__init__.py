"""The outbox: a run's transcript entries kept on the runner's disk until the session store has them.

The SDK hands every transcript line to the store as soon as the CLI writes it (flower sets
`session_store_flush="eager"`); the Runtime's store puts it in the workspace's outbox first, a local
SQLite file (`Outbox`), and a `Deliverer` sends it on, in order and exactly once, retrying with bounded
backoff while the store is unreachable (`DeliveryPolicy`). What is still there at the end of a run is
delivered at the next start in the same workspace; and what the CLI wrote to its local transcript but
no store ever got (a killed runner) is found by `reconcile`.

Split by concern: the file (`_file`, its layout `_schema`, its records `_books`), delivery
(`deliver`), the local transcripts (`reconcile`).
"""

from ._file import LABEL, MEMORY, Outbox, Record, Row, Waiting
from ._route import Route
from .deliver import Deliverer, DeliveryPolicy

__all__ = ["LABEL", "MEMORY", "Deliverer", "DeliveryPolicy", "Outbox", "Record", "Route", "Row", "Waiting"]
