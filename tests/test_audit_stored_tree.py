"""The stored tree (a cache) compared with the events a batch at a time: an edit that leaves the tree's content as
logged is no finding, and what lies outside the rows compared is still judged."""

from __future__ import annotations

from tests.test_audit_tamper import Signed, signed  # noqa: F401 - the signed store, on SQLite and PostgreSQL
from tests.test_chain import StoredEvents


def test_a_node_written_again_under_its_own_key_with_its_own_hash_is_no_finding(signed: Signed, capsys):
    """Written again, a node's row leaves the order its leaves completed it in (SQLite's rowid): the batch's nodes
    then differ as one whole and are compared node by node, which finds each where it belongs."""
    with StoredEvents(signed.url) as stored:
        [(digest,)] = stored.execute("SELECT hash FROM audit_nodes WHERE level = 1 AND idx = 2")
        stored.execute("DELETE FROM audit_nodes WHERE level = 1 AND idx = 2")
        stored.execute("INSERT INTO audit_nodes (level, idx, hash) VALUES (1, 2, ?)", digest)
    code, out = signed.verify(capsys)
    assert code == 0 and "VERDICT: intact" in out and "TREE" not in out


def test_two_nodes_of_a_level_swapped_with_their_hashes_are_found_where_they_now_stand(signed: Signed, capsys):
    """Each row keeps its place in the rows and its hash: only its key changed, so only a comparison by key finds
    it (the nodes read in their rows' order are the ones logged)."""
    with StoredEvents(signed.url) as stored:
        for was, now in ((4, -1), (5, 4), (-1, 5)):  # one at a time: the key stays unique throughout
            stored.execute("UPDATE audit_nodes SET idx = ? WHERE level = 0 AND idx = ?", now, was)
    code, out = signed.verify(capsys)
    assert code == 1 and "TREE: the stored tree's node (0, 4) is not the hash of the events under it" in out


def test_a_leaf_record_stored_beyond_the_tree_is_judged_with_what_it_names(signed: Signed, capsys):
    with StoredEvents(signed.url) as stored:
        [(size,)] = stored.execute("SELECT size FROM audit_state")
        stored.execute("INSERT INTO audit_leaves (leaf_index, notification_id, originator_id, originator_version, "
                       "event_hash) VALUES (?, ?, ?, 1, ?)", size + 3, size + 3,
                       "6f1c2a52-93b5-4cc0-9a8e-1d2e3f405162", "ab" * 32)
    code, out = signed.verify(capsys)
    assert code == 1
    assert f"TREE: the stored tree was altered: its state says {size} leaves, {size + 1} leaf records" in out
    assert ("DELETED: 6f1c2a52-93b5-4cc0-9a8e-1d2e3f405162: all of its 1 logged events were deleted from the "
            "store") in out
