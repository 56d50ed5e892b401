// A check of a fencepost transparency log by Go's own code (golang.org/x/mod/sumdb/note and
// sumdb/tlog, Debian's golang-golang-x-mod-dev), which fencepost did not write:
//
//	sumdb_check DIR VKEY [OLD_CHECKPOINT...]
//
// DIR holds the log as served: checkpoint, tile/<L>/<N>[.p/<W>], tile/entries/<N>[.p/<W>]
// (c2sp.org/tlog-tiles). It opens the checkpoint with VKEY, recomputes the tree's root from
// the tiles, proves and checks every entry of the bundles against it, and proves each older
// checkpoint consistent with it. Prints "ok SIZE" and every entry as base64, one per line.
package main

import (
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"
)

// tiles reads Go's tiles of height 8 from C2SP's paths: Go names them tile/8/L/N, C2SP
// tile/L/N.
type tiles struct{ dir string }

func (d tiles) Height() int { return 8 }

func (d tiles) ReadTiles(ts []tlog.Tile) ([][]byte, error) {
	out := make([][]byte, len(ts))
	for i, t := range ts {
		p := "tile/" + strings.TrimPrefix(t.Path(), "tile/8/")
		b, err := os.ReadFile(filepath.Join(d.dir, p))
		if err != nil {
			return nil, err
		}
		out[i] = b
	}
	return out, nil
}

func (d tiles) SaveTiles([]tlog.Tile, [][]byte) {}

func fail(format string, args ...interface{}) {
	fmt.Fprintf(os.Stderr, "sumdb_check: "+format+"\n", args...)
	os.Exit(1)
}

// open checks a signed checkpoint and returns its tree.
func open(msg []byte, v note.Verifier) tlog.Tree {
	n, err := note.Open(msg, note.VerifierList(v))
	if err != nil {
		fail("checkpoint: %v", err)
	}
	lines := strings.Split(n.Text, "\n")
	if len(lines) != 4 || lines[3] != "" {
		fail("checkpoint: not exactly origin, size and root lines: %q", n.Text)
	}
	if lines[0] != v.Name() {
		fail("checkpoint: origin %q is not the key's name %q", lines[0], v.Name())
	}
	size, err := strconv.ParseInt(lines[1], 10, 64)
	if err != nil || (size != 0 && strings.HasPrefix(lines[1], "0")) {
		fail("checkpoint: size %q", lines[1])
	}
	root, err := tlog.ParseHash(lines[2])
	if err != nil {
		fail("checkpoint: root %q: %v", lines[2], err)
	}
	return tlog.Tree{N: size, Hash: root}
}

func main() {
	if len(os.Args) < 3 {
		fail("usage: sumdb_check DIR VKEY [OLD_CHECKPOINT...]")
	}
	dir := os.Args[1]
	v, err := note.NewVerifier(os.Args[2])
	if err != nil {
		fail("vkey: %v", err)
	}
	msg, err := os.ReadFile(filepath.Join(dir, "checkpoint"))
	if err != nil {
		fail("%v", err)
	}
	tree := open(msg, v)
	thr := tlog.TileHashReader(tree, tiles{dir})
	root, err := tlog.TreeHash(tree.N, thr)
	if err != nil || root != tree.Hash {
		fail("the tiles do not hash to the checkpoint's root: %v", err)
	}
	var entries []string
	for k := int64(0); k*256 < tree.N; k++ {
		w := tree.N - k*256
		if w > 256 {
			w = 256
		}
		p := "tile/entries/" + strings.TrimPrefix(tlog.Tile{H: 8, L: 0, N: k, W: int(w)}.Path(), "tile/8/0/")
		b, err := os.ReadFile(filepath.Join(dir, p))
		if err != nil {
			fail("%v", err)
		}
		for j := int64(0); j < w; j++ {
			if len(b) < 2 || len(b) < 2+int(binary.BigEndian.Uint16(b)) {
				fail("%s: entry %d is cut short", p, j)
			}
			l := int(binary.BigEndian.Uint16(b))
			entry := b[2 : 2+l]
			b = b[2+l:]
			i := k*256 + j
			proof, err := tlog.ProveRecord(tree.N, i, thr)
			if err != nil {
				fail("entry %d: %v", i, err)
			}
			if err := tlog.CheckRecord(proof, tree.N, tree.Hash, i, tlog.RecordHash(entry)); err != nil {
				fail("entry %d is not in the tree: %v", i, err)
			}
			entries = append(entries, base64.StdEncoding.EncodeToString(entry))
		}
		if len(b) != 0 {
			fail("%s: %d bytes after its %d entries", p, len(b), w)
		}
	}
	for _, old := range os.Args[3:] {
		msg, err := os.ReadFile(old)
		if err != nil {
			fail("%v", err)
		}
		t := open(msg, v)
		proof, err := tlog.ProveTree(tree.N, t.N, thr)
		if err != nil {
			fail("consistency with %s: %v", old, err)
		}
		if err := tlog.CheckTree(proof, tree.N, tree.Hash, t.N, t.Hash); err != nil {
			fail("%s is not consistent with the checkpoint: %v", old, err)
		}
	}
	fmt.Printf("ok %d\n", tree.N)
	for _, e := range entries {
		fmt.Println(e)
	}
}
