"""Reading the stored tree's perfect nodes (`audit_nodes`) for proofs: one at a time, or every node a set of proofs
needs in a few queries.

A case's verdict, its export and its case file prove each of the case's events under the latest checkpoint: a few
hundred inclusion proofs, which take about a thousand distinct perfect nodes. Asked for one by one, that is a
thousand queries. `Proofs` first finds which nodes those proofs and the tree's root take, running the recursion of
`merkle.inclusion_proof` over ranges only (`path_ranges`: no hash is read or computed) and splitting each range
into perfect subtrees (`cover`), then reads them a level and a chunk at a time (`read`), and makes each proof from
what it read. A node the proofs take that the table does not hold (a database administrator deleted or never wrote
it) raises `merkle.ProofError` naming it when a proof asks for it, exactly as reading it alone would."""

from __future__ import annotations

from collections.abc import Collection, Iterable

from audit import merkle
from infrastructure.store import Store

#: Node indexes per query (well under SQLite's and PostgreSQL's limits on bound parameters).
CHUNK = 500
#: A node's hash as read, by dialect: on SQLite only a blob (a column there takes any value, and text that is no
#: UTF-8 would make the driver raise on the read), anything else read as NULL, a missing node.
_HASH = {"sqlite": "CASE WHEN typeof(hash) = 'blob' THEN hash END", "postgresql": "hash"}

Position = tuple[int, int]
"""(level, index at that level) of a perfect subtree; level 0 holds the leaf hashes."""


def missing(level: int, index: int) -> merkle.ProofError:
    return merkle.ProofError(f"the stored tree has no node ({level}, {index}): it was altered or cut")


def stored_hash(value: object) -> bytes | None:
    """A node's stored hash, when it is 32 bytes; None for anything else an administrator can write there (text,
    a number: `bytes(10**10)` would make ten gigabytes of zeros)."""
    if isinstance(value, (bytes, bytearray, memoryview)) and len(value) == 32:
        return bytes(value)
    return None


def read_one(store: Store, level: int, index: int) -> bytes:
    """One stored node; ProofError when the table does not hold it, or holds no 32-byte hash there."""
    rows = store.query(f"SELECT {_HASH[store.dialect]} FROM audit_nodes WHERE level = ? AND idx = ?", (level, index))
    digest = stored_hash(rows[0][0]) if rows else None
    if digest is None:
        raise missing(level, index)
    return digest


def read(store: Store, positions: Iterable[Position]) -> dict[Position, bytes]:
    """The stored nodes at `positions` that the table holds (a missing one, or one that is no 32-byte hash, is
    simply absent)."""
    by_level: dict[int, list[int]] = {}
    for level, index in set(positions):
        by_level.setdefault(level, []).append(index)
    found: dict[Position, bytes] = {}
    for level, indexes in sorted(by_level.items()):
        indexes.sort()
        for start in range(0, len(indexes), CHUNK):
            chunk = indexes[start:start + CHUNK]
            rows = store.query(f"SELECT idx, {_HASH[store.dialect]} FROM audit_nodes WHERE level = ? AND idx IN "
                               f"({', '.join('?' * len(chunk))})", (level, *chunk))
            found.update(((level, int(index)), digest) for index, stored in rows
                         if (digest := stored_hash(stored)) is not None)
    return found


def read_span(store: Store, level: int, first: int, last: int) -> dict[int, bytes]:
    """The stored nodes of one level with indexes in [first, last], by index (one that is no 32-byte hash is
    absent)."""
    rows = store.query(f"SELECT idx, {_HASH[store.dialect]} FROM audit_nodes WHERE level = ? AND idx >= ? AND "
                       "idx <= ?", (level, first, last))
    return {index: digest for index, stored in rows if type(index) is int and (digest := stored_hash(stored))}


def perfect(lo: int, hi: int) -> Position | None:
    """The position of MTH(D[lo:hi]) when it is a stored perfect node (None: it is computed from two halves)."""
    width = hi - lo
    if width & (width - 1) == 0 and lo % width == 0:
        level = width.bit_length() - 1
        return level, lo >> level
    return None


def path_ranges(index: int, size: int) -> list[tuple[int, int]]:
    """The ranges [lo, hi) whose tree hashes are the inclusion proof of leaf `index` in the tree of `size`, in the
    proof's order: `merkle.inclusion_proof` itself, over a "tree" whose hash of a range is the range (the proof's
    recursion asks for the same ranges whatever their hashes are)."""
    return merkle.inclusion_proof(index, size, lambda lo, hi: (lo, hi))  # type: ignore[arg-type, return-value]


def cover(ranges: Iterable[tuple[int, int]]) -> set[Position]:
    """The perfect nodes the tree hashes of `ranges` are made of, each range split as `stored_subtree` splits it."""
    positions: set[Position] = set()
    seen: set[tuple[int, int]] = set()
    pending = list(set(ranges))  # a case's proofs share most of their ranges
    while pending:
        lo, hi = pending.pop()
        if (lo, hi) in seen:
            continue
        seen.add((lo, hi))
        position = perfect(lo, hi)
        if position is not None:
            positions.add(position)
        else:
            k = merkle.split_point(hi - lo)
            pending += [(lo, lo + k), (lo + k, hi)]
    return positions


def stored_subtree(store: Store, fetched: dict[Position, bytes] | None = None, wanted: Collection[Position] = (),
                   memo: dict[tuple[int, int], bytes] | None = None) -> merkle.Subtree:
    """A `Subtree` over the stored perfect nodes, memoised for one read (a proof, an export, a verdict) in `memo`
    (by range).

    `fetched` holds nodes read beforehand for the positions `wanted`; a wanted node it lacks is missing from the
    table (ProofError when asked for), and a node nobody read beforehand is read when asked for."""
    memo = {} if memo is None else memo
    nodes = fetched if fetched is not None else {}

    def node(level: int, index: int) -> bytes:
        found = nodes.get((level, index))
        if found is not None:
            return found
        if (level, index) in wanted:
            raise missing(level, index)
        return read_one(store, level, index)

    def subtree(lo: int, hi: int) -> bytes:
        found = memo.get((lo, hi))
        if found is not None:
            return found
        position = perfect(lo, hi)
        if position is not None:
            found = node(*position)
        else:
            k = merkle.split_point(hi - lo)
            found = merkle.node_hash(subtree(lo, lo + k), subtree(lo + k, hi))
        memo[(lo, hi)] = found
        return found

    return subtree


class Proofs:
    """The root of the tree of `size` and the inclusion proofs of some of its leaves, over the stored nodes they
    need, read beforehand (`AuditLog.proofs`). ProofError, when one is asked for, if the stored tree has fewer
    than `size` leaves or lacks a node the answer takes. A leaf not given is proved too, its nodes read as asked."""

    def __init__(self, store: Store, stored_size: int, size: int, leaves: Iterable[int]) -> None:
        self.size, self.stored_size = size, stored_size
        readable = 0 < size <= stored_size
        self.paths = {index: path_ranges(index, size) for index in set(leaves) if 0 <= index < size} \
            if readable else {}
        wanted = cover([(0, size), *(r for path in self.paths.values() for r in path)]) if readable else set()
        fetched = read(store, wanted)
        # every node read is the tree hash of its range: a proof takes most of its steps from here as they are
        self.hashes = {(index << level, (index + 1) << level): digest for (level, index), digest in fetched.items()}
        self.subtree = stored_subtree(store, fetched, wanted, self.hashes)

    def _require(self) -> None:
        if self.size > self.stored_size:
            raise merkle.ProofError(f"the tree has {self.stored_size} leaves, not {self.size}")

    def root(self) -> bytes:
        if self.size == 0:
            return merkle.EMPTY_ROOT
        self._require()
        return self.subtree(0, self.size)

    def inclusion(self, index: int) -> list[bytes]:
        """PATH(index, D[size]) of RFC 9162 §2.1.3.1, as `merkle.inclusion_proof` makes it."""
        self._require()
        path = self.paths.get(index)
        if path is None:
            return merkle.inclusion_proof(index, self.size, self.subtree)
        hashes, subtree = self.hashes, self.subtree
        return [hashes.get(step) or subtree(*step) for step in path]
