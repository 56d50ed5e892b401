"""A reader's check of a fencepost transparency log by tlog-scales (PyPI, pinned 0.0.3), software
fencepost did not write (fencepost's own tests run it too):

    python3 -m venv tlog && tlog/bin/pip install tlog-scales==0.0.3
    tlog/bin/python tlog-scales-check.py LOCATION VKEY [OLD_CHECKPOINT...]

LOCATION is the log's folder or URL (`https://example.org/.well-known/fencepost/log`: its
checkpoint, tile/..., tile/entries/...). It checks the tree: the checkpoint's signature by VKEY
and its origin, the root recomputed from the tiles, every entry's inclusion proof, and each
older checkpoint's consistency proof (the log only grew). It does not read what the entries
say — that a reveal opens a commitment made before it, that the JSON served is the one
committed — which is what `fencepost tlog verify` adds (docs/transparency.md). Prints JSON:
{"origin", "size", "entries" (base64)}; exits non-zero on the first check that fails.
"""

import base64
import json
import sys

from tlog_scales import backend, tiles
from tlog_scales.reader import TilesReader
from tlog_scales.signing import Vkey
from tlog_scales.tlog import Checkpoint


def main() -> None:
    location, vkey_text, olds = sys.argv[1], sys.argv[2], sys.argv[3:]
    vkey = Vkey.from_string(vkey_text)
    reader = TilesReader(backend.make_backend(location))
    cp = reader.get_checkpoint()
    cp.verify(vkey)
    if cp.origin != vkey.name:
        raise SystemExit(f"origin {cp.origin!r} is not the key's name {vkey.name!r}")
    if reader.calculate_root_hash() != cp.root_hash:
        raise SystemExit("the tiles do not hash to the checkpoint's root")
    entries = []
    for i in range(cp.size):
        entry = reader.get_entry(i)
        reader.get_inclusion_proof(i, cp.size).check(tiles.leaf_hash(entry), cp.root_hash)
        entries.append(base64.b64encode(entry).decode())
    for path in olds:
        with open(path) as f:
            old = Checkpoint.from_text(f.read())
        old.verify(vkey)
        reader.get_consistency_proof(old.size, cp.size).check(old.root_hash, cp.root_hash)
    print(json.dumps({"origin": cp.origin, "size": cp.size, "entries": entries}))


if __name__ == "__main__":
    main()
