"""A check of a fencepost transparency log by tlog-scales (PyPI, pinned 0.0.3), which fencepost
did not write:

    python tlog_scales_check.py LOCATION VKEY [OLD_CHECKPOINT...]

LOCATION is the log's folder or URL (checkpoint, tile/..., tile/entries/...). It verifies the
checkpoint with VKEY, recomputes the root from the tiles, checks every entry's inclusion proof,
and each older checkpoint's consistency proof. Prints JSON: {"origin", "size", "entries"
(base64)}.
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
