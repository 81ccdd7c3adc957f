"""RFC 9162 §2.1: the Merkle tree hash, inclusion and consistency proofs, and their verification.

leaf hash = SHA-256(0x00 ‖ entry), node hash = SHA-256(0x01 ‖ left ‖ right), MTH of §2.1.1 (the empty tree's
hash is SHA-256 of nothing). Trees are read through a `Subtree` function, `subtree(lo, hi)` -> MTH(D[lo:hi]),
which a caller backs with a list of leaf hashes (tests, the offline verifier) or with the stored perfect nodes of
the log (`audit.log`). Every range RFC 9162's recursions ask for starts at a multiple of the largest power of
two it splits on, so a store of perfect subtrees answers each in O(log n).

`Frontier` is the tree's right edge (the perfect subtrees whose sizes are the binary digits of n): appending a
leaf costs O(log n) hashes, never a re-hash of the log, and it yields each completed perfect node once.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Sequence

HASH_SIZE = 32
EMPTY_ROOT = hashlib.sha256(b"").digest()

Subtree = Callable[[int, int], bytes]


class ProofError(ValueError):
    """A proof does not verify, or was asked for sizes or indexes the tree does not have."""


def leaf_hash(entry: bytes) -> bytes:
    return hashlib.sha256(b"\x00" + entry).digest()


def node_hash(left: bytes, right: bytes) -> bytes:
    return hashlib.sha256(b"\x01" + left + right).digest()


def split_point(n: int) -> int:
    """The largest power of two smaller than n (n >= 2): where RFC 9162 splits D[n]."""
    return 1 << ((n - 1).bit_length() - 1)


def root_of(leaf_hashes: Sequence[bytes]) -> bytes:
    """MTH(D[n]) of a list of leaf hashes (§2.1.1)."""
    return subtree_of(leaf_hashes)(0, len(leaf_hashes)) if leaf_hashes else EMPTY_ROOT


def subtree_of(leaf_hashes: Sequence[bytes]) -> Subtree:
    """A `Subtree` over leaf hashes held in memory (computed on demand, memoised)."""
    memo: dict[tuple[int, int], bytes] = {}

    def subtree(lo: int, hi: int) -> bytes:
        if hi - lo == 1:
            return leaf_hashes[lo]
        found = memo.get((lo, hi))
        if found is None:
            k = split_point(hi - lo)
            found = memo[(lo, hi)] = node_hash(subtree(lo, lo + k), subtree(lo + k, hi))
        return found

    return subtree


def inclusion_proof(index: int, size: int, subtree: Subtree) -> list[bytes]:
    """PATH(m, D[n]) of §2.1.3.1: the sibling hashes from the leaf up to the root, nearest first."""
    if not 0 <= index < size:
        raise ProofError(f"leaf {index} is not in a tree of size {size}")
    try:
        return _inclusion_path(index, size, subtree)
    except IndexError:
        raise ProofError(f"the tree has fewer than {size} leaves") from None


def _inclusion_path(index: int, size: int, subtree: Subtree) -> list[bytes]:
    path: list[bytes] = []
    lo, hi, m = 0, size, index
    while hi - lo > 1:
        k = split_point(hi - lo)
        if m < k:
            path.append(subtree(lo + k, hi))
            hi = lo + k
        else:
            path.append(subtree(lo, lo + k))
            lo, m = lo + k, m - k
    path.reverse()
    return path


def consistency_proof(first: int, second: int, subtree: Subtree) -> list[bytes]:
    """PROOF(m, D[n]) of §2.1.4.1: what proves the tree of size `second` extends the one of size `first`."""
    if not 0 <= first <= second:
        raise ProofError(f"no consistency proof from size {first} to size {second}")
    if first == 0 or first == second:
        return []
    proof: list[bytes] = []
    lo, hi, m, complete = 0, second, first, True
    while True:
        n = hi - lo
        if m == n:
            if not complete:
                proof.append(subtree(lo, hi))
            break
        k = split_point(n)
        if m <= k:
            proof.append(subtree(lo + k, hi))
            hi = lo + k
        else:
            proof.append(subtree(lo, lo + k))
            lo, m, complete = lo + k, m - k, False
    proof.reverse()
    return proof


def root_from_inclusion(index: int, size: int, leaf: bytes, path: Sequence[bytes]) -> bytes:
    """§2.1.3.2: the root that `path` proves `leaf` (at `index`, in a tree of `size`) is under."""
    if not 0 <= index < size:
        raise ProofError(f"leaf index {index} is not below the tree size {size}")
    _require_hash(leaf)
    fn, sn, r = index, size - 1, leaf
    for p in path:
        _require_hash(p)
        if sn == 0:
            raise ProofError("the inclusion proof is longer than the tree is deep")
        if fn & 1 or fn == sn:
            r = node_hash(p, r)
            if not fn & 1:
                while fn and not fn & 1:
                    fn, sn = fn >> 1, sn >> 1
        else:
            r = node_hash(r, p)
        fn, sn = fn >> 1, sn >> 1
    if sn != 0:
        raise ProofError("the inclusion proof is shorter than the tree is deep")
    return r


def verify_inclusion(index: int, size: int, leaf: bytes, path: Sequence[bytes], root: bytes) -> None:
    """Raise ProofError unless `path` proves `leaf` at `index` in the tree of `size` whose root is `root`."""
    _require_hash(root)
    if root_from_inclusion(index, size, leaf, path) != root:
        raise ProofError(f"leaf {index} is not in the tree of size {size} with that root")


def verify_consistency(first: int, second: int, first_root: bytes, second_root: bytes,
                       proof: Sequence[bytes]) -> None:
    """§2.1.4.2: raise ProofError unless `proof` shows the tree (`second`, `second_root`) extends
    (`first`, `first_root`)."""
    if not 0 <= first <= second:
        raise ProofError(f"size {first} is larger than size {second}: a log never shrinks")
    for p in proof:
        _require_hash(p)
    if first == second:
        if proof:
            raise ProofError("a proof between equal sizes must be empty")
        if first_root != second_root:
            raise ProofError(f"two different roots for the same size {first}")
        return
    if first == 0:
        if proof:
            raise ProofError("a proof from the empty tree must be empty")
        return
    if not proof:
        raise ProofError("the consistency proof is empty")
    path = list(proof)
    if first & (first - 1) == 0:  # an exact power of two: the first tree is itself a node of the second
        path.insert(0, first_root)
    fn, sn = first - 1, second - 1
    while fn & 1:
        fn, sn = fn >> 1, sn >> 1
    fr = sr = path[0]
    for c in path[1:]:
        if sn == 0:
            raise ProofError("the consistency proof is longer than the trees are deep")
        if fn & 1 or fn == sn:
            fr, sr = node_hash(c, fr), node_hash(c, sr)
            if not fn & 1:
                while fn and not fn & 1:
                    fn, sn = fn >> 1, sn >> 1
        else:
            sr = node_hash(sr, c)
        fn, sn = fn >> 1, sn >> 1
    if sn != 0:
        raise ProofError("the consistency proof is shorter than the trees are deep")
    if fr != first_root:
        raise ProofError(f"the proof does not lead to the root of size {first}")
    if sr != second_root:
        raise ProofError(f"the proof does not lead to the root of size {second}")


def _require_hash(value: bytes) -> None:
    if not isinstance(value, bytes) or len(value) != HASH_SIZE:
        raise ProofError("a leaf, root or proof step is not a 32-byte hash")


class Frontier:
    """The right edge of a tree: its perfect subtrees left to right, as (level, hash); appends in O(log n)."""

    __slots__ = ("size", "nodes")

    def __init__(self, size: int = 0, nodes: Iterable[tuple[int, bytes]] = ()) -> None:
        self.size = size
        self.nodes = list(nodes)
        if [level for level, _ in self.nodes] != frontier_levels(size):
            raise ValueError(f"a frontier of size {size} has perfect subtrees of levels {frontier_levels(size)}")

    def append(self, leaf: bytes) -> list[tuple[int, int, bytes]]:
        """Add a leaf hash; return the perfect nodes it completes, as (level, index at that level, hash),
        the leaf itself (level 0) first."""
        index = self.size
        completed = [(0, index, leaf)]
        nodes = self.nodes
        level, current = 0, leaf
        while nodes and nodes[-1][0] == level:
            _, left = nodes.pop()
            current, level = node_hash(left, current), level + 1
            completed.append((level, index >> level, current))
        nodes.append((level, current))
        self.size = index + 1
        return completed

    def push(self, leaf: bytes) -> None:
        """Add a leaf hash, keeping only the right edge (what a verifier rebuilding the tree needs)."""
        nodes = self.nodes
        level, current = 0, leaf
        while nodes and nodes[-1][0] == level:
            current, level = node_hash(nodes.pop()[1], current), level + 1
        nodes.append((level, current))
        self.size += 1

    def root(self) -> bytes:
        """MTH of the tree so far."""
        if not self.nodes:
            return EMPTY_ROOT
        r = self.nodes[-1][1]
        for _, left in reversed(self.nodes[:-1]):
            r = node_hash(left, r)
        return r


def frontier_levels(size: int) -> list[int]:
    """The levels of the perfect subtrees of a tree of `size`, left (largest) to right."""
    return [level for level in range(size.bit_length() - 1, -1, -1) if size >> level & 1]


def frontier_positions(size: int) -> list[tuple[int, int]]:
    """(level, index at that level) of each perfect subtree of the right edge of a tree of `size`."""
    positions, offset = [], 0
    for level in frontier_levels(size):
        positions.append((level, offset >> level))
        offset += 1 << level
    return positions
