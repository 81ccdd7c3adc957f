"""A case's proofs read from the stored tree in a few queries (`audit.nodes`, `AuditLog.proofs`): the same bytes as
the node-by-node reader and as RFC 9162's tree over the leaves, on trees of many sizes (powers of two or not), on
SQLite and PostgreSQL; and a node a database administrator deleted is still reported, naming it."""

from __future__ import annotations

import hashlib

import pytest

from audit import merkle, nodes
from audit.log import AuditLog
from infrastructure.store import open_store

#: Tree sizes around the edges of perfect subtrees: 1, powers of two, one either side of them, and some between.
SIZES = (1, 2, 3, 4, 5, 7, 8, 9, 13, 31, 32, 33, 100, 255, 256, 257, 1000)


def leaf_hashes(count: int) -> list[bytes]:
    return [merkle.leaf_hash(hashlib.sha256(f"entry {i}".encode()).digest()) for i in range(count)]


@pytest.fixture
def stored(database_url):  # noqa: ANN001, ANN201
    """A factory: the stored tree of `count` leaves, written as the log's writer writes it (each perfect node its
    appends complete), and the leaf hashes it was built from."""
    store = open_store(database_url)
    log = AuditLog(None, store)
    log.migrate()

    def build(count: int) -> tuple[AuditLog, list[bytes]]:
        hashes, frontier, completed = leaf_hashes(count), merkle.Frontier(), []
        for leaf in hashes:
            completed += frontier.append(leaf)
        with store.transaction() as tx:
            tx.execute("DELETE FROM audit_nodes")
            tx.executemany("INSERT INTO audit_nodes (level, idx, hash) VALUES (?, ?, ?)", completed)
            tx.execute("UPDATE audit_state SET size = ?, position = ? WHERE id = 1", (count, count))
        return log, hashes

    yield build
    store.close()


def count_queries(log: AuditLog, monkeypatch) -> list[str]:  # noqa: ANN001
    asked: list[str] = []
    query = log.store.query

    def counting(sql, params=()):  # noqa: ANN001, ANN202
        asked.append(sql)
        return query(sql, params)

    monkeypatch.setattr(log.store, "query", counting)
    return asked


def test_every_batched_proof_and_root_is_byte_for_byte_the_node_by_node_one_and_rfc_9162s(stored):
    log, hashes = stored(max(SIZES))
    for size in SIZES:  # a checkpoint of each size, under the one tree of 1000 leaves
        reference = merkle.subtree_of(hashes[:size])
        proofs = log.proofs(size, range(size))
        assert proofs.root() == log.root(size) == merkle.root_of(hashes[:size])
        for index in range(size):
            path = proofs.inclusion(index)
            assert path == log.inclusion(index, size, log.reader()) == merkle.inclusion_proof(index, size, reference)
            merkle.verify_inclusion(index, size, hashes[index], path, proofs.root())


@pytest.mark.parametrize("size", SIZES)
def test_the_proofs_of_some_leaves_of_a_tree_are_the_node_by_node_ones_in_a_tree_of_that_size(stored, size):
    log, hashes = stored(size)
    chosen = sorted({0, size - 1, size // 2, *range(1, size, 13)})  # a case's leaves, scattered over the log
    proofs = log.proofs(size, chosen)
    assert proofs.root() == merkle.root_of(hashes)
    assert [proofs.inclusion(i) for i in chosen] == [log.inclusion(i, size, log.reader()) for i in chosen]
    assert proofs.inclusion(size // 3) == log.inclusion(size // 3, size)  # a leaf not named beforehand is proved too


def test_a_cases_proofs_read_the_stored_tree_a_level_and_a_chunk_at_a_time_not_a_node_at_a_time(stored,
                                                                                                monkeypatch):
    log, _ = stored(1000)
    chosen = list(range(3, 1000, 7))  # 143 leaves, interleaved with other cases' events
    asked = count_queries(log, monkeypatch)
    proofs = log.proofs(1000, chosen)
    before = len(asked)
    paths = [proofs.inclusion(i) for i in chosen]
    proofs.root()
    assert len(asked) == before, "every node was read beforehand"
    node_reads = [sql for sql in asked if "audit_nodes" in sql]
    assert 1 <= len(node_reads) <= (1000).bit_length()  # one query per level of the tree at most
    monkeypatch.setattr(nodes, "CHUNK", 5)  # more indexes at one level than a query takes: read in chunks
    asked.clear()
    assert [log.proofs(1000, chosen).inclusion(i) for i in chosen] == paths
    assert len([sql for sql in asked if "audit_nodes" in sql]) > (1000).bit_length()


def test_a_deleted_node_is_reported_by_name_by_every_proof_that_takes_it_and_by_no_other(stored):
    log, hashes = stored(100)
    with log.store.transaction() as tx:
        tx.execute("DELETE FROM audit_nodes WHERE level = ? AND idx = ?", (0, 41))
    proofs = log.proofs(100, range(100))
    with pytest.raises(merkle.ProofError, match=r"the stored tree has no node \(0, 41\): it was altered or cut"):
        proofs.inclusion(40)  # leaf 41 is leaf 40's sibling
    assert proofs.inclusion(41) == merkle.inclusion_proof(41, 100, merkle.subtree_of(hashes))  # its own leaf is not
    assert proofs.root() == merkle.root_of(hashes)                                             # in its proof
    with log.store.transaction() as tx:
        tx.execute("DELETE FROM audit_nodes WHERE level = ? AND idx = ?", (6, 0))  # leaves 0-63, under the root
    with pytest.raises(merkle.ProofError, match=r"no node \(6, 0\)"):
        log.proofs(100, [70]).inclusion(70)
    with pytest.raises(merkle.ProofError, match=r"no node \(6, 0\)"):
        log.proofs(100, []).root()


def test_a_proof_in_a_tree_larger_than_the_stored_one_is_refused_as_the_node_by_node_reader_refuses_it(stored):
    log, _ = stored(10)
    proofs = log.proofs(12, range(12))  # a checkpoint of 12 over a tree cut back to 10
    for ask in (proofs.root, lambda: proofs.inclusion(3)):
        with pytest.raises(merkle.ProofError, match="the tree has 10 leaves, not 12"):
            ask()
    with pytest.raises(merkle.ProofError, match="leaf 10 is not in a tree of size 10"):
        log.proofs(10, [10]).inclusion(10)
    assert log.proofs(0, []).root() == merkle.EMPTY_ROOT
