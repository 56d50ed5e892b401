"""moto's S3 server (`moto_server`'s own arguments) with its conditional writes made atomic.

moto checks `If-None-Match: *` and `If-Match` and then writes the object as two steps, on a
server that answers requests on many threads: two racing creates of one key can both pass the
check and both "succeed", which AWS S3, R2, GCS, Azure and MinIO never let happen. fencepost
is built on that promise (a bucket ledger's commit, a deploy's pointer compare-and-set), and
its racing tests would otherwise meet a store no user has. One lock around moto's object PUT
makes the check and the write one step, as on the real stores; nothing else changes.
Run by the tests (`tests/suite/common/moto.rs`) and `scripts/bench` with the venv's python.
"""
import sys
import threading

from moto.s3 import responses

_lock = threading.Lock()
_put_object = responses.S3Response.put_object


def put_object(self):
    with _lock:
        return _put_object(self)


responses.S3Response.put_object = put_object

from moto.server import main  # noqa: E402  (after the patch)

if __name__ == "__main__":
    sys.exit(main())
