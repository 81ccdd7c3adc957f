"""RFC 9162 §2.1 (`audit.merkle`): the published reference tree, RFC 9162's own recursive definitions, and properties
over random logs: every proof the module makes verifies, and every alteration of one fails.

The published values are copied from transparency-dev/merkle (the same tree as Trillian's merkle/rfc6962 tests):
`testonly/constants.go` (leaf inputs, node hashes, roots), `proof/verify_test.go` (inclusion and consistency proofs
and the corruptions they must survive), `proof/proof_test.go` (which nodes each proof takes) and
`rfc6962/rfc6962_test.go` (the hasher).

Random logs hold distinct entries: with two equal entries, a proof for one of them is a true proof for the other, so
"another index fails" would not hold (nor should it).
"""

from __future__ import annotations

import hashlib

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from audit.merkle import (
    EMPTY_ROOT,
    Frontier,
    ProofError,
    consistency_proof,
    frontier_levels,
    frontier_positions,
    inclusion_proof,
    leaf_hash,
    node_hash,
    root_from_inclusion,
    root_of,
    subtree_of,
    verify_consistency,
    verify_inclusion,
)

# ------------------------------------------------------------------------------------------- published vectors

h = bytes.fromhex

# transparency-dev/merkle, testonly/constants.go: LeafInputs().
LEAF_INPUTS = [h(x) for x in ("", "00", "10", "2021", "3031", "40414243", "5051525354555657",
                              "606162636465666768696a6b6c6d6e6f")]

# transparency-dev/merkle, testonly/constants.go: NodeHashes(), the perfect subtrees by level, then index.
NODE_HASHES = [[h(x) for x in level] for level in (
    ("6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d",
     "96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7",
     "0298d122906dcfc10892cb53a73992fc5b9f493ea4c9badb27b791b4127a7fe7",
     "07506a85fd9dd2f120eb694f86011e5bb4662e5c415a62917033d4a9624487e7",
     "bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b",
     "4271a26be0d8a84f0bd54c8c302e7cb3a3b5d1fa6780a40bcce2873477dab658",
     "b08693ec2e721597130641e8211e7eedccb4c26413963eee6c1e2ed16ffb1a5f",
     "46f6ffadd3d06a09ff3c5860d2755c8b9819db7df44251788c7d8e3180de8eb1"),
    ("fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125",
     "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
     "0ebc5d3437fbe2db158b9f126a1d118e308181031d0a949f8dededebc558ef6a",
     "ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0"),
    ("d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
     "6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4"),
    ("5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328",),
)]

# transparency-dev/merkle, testonly/constants.go: RootHashes(), by tree size from the empty tree.
ROOT_HASHES = [h(x) for x in (
    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    "6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d",
    "fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125",
    "aeb6bcfe274b70a14fb067a5e5578264db0fa9b51af5e0ba159158f329e06e77",
    "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
    "4e3bbb1f7b478dcfe71fb631631519a3bca12c9aefca1612bfce4c13a86264d4",
    "76e67dadbcdf1e10e1b74ddc608abd2f98dfb16fbce75277b5232a127f2087ef",
    "ddb89be403809e325750d3d263cd78929c2942b7942a34b77e122c9594a74c8c",
    "5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328",
)]

# transparency-dev/merkle, proof/verify_test.go: inclusionProofs as (leaf index, tree size, path). The Go table
# numbers leaves from 1 (its {1, 8, …} is the first leaf); these are 0-based indexes.
INCLUSION_PROOFS = [
    (0, 1, []),
    (0, 8, [h("96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7"),
            h("5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e"),
            h("6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4")]),
    (5, 8, [h("bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b"),
            h("ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0"),
            h("d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7")]),
    (2, 3, [h("fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125")]),
    (1, 5, [h("6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d"),
            h("5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e"),
            h("bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b")]),
]

# transparency-dev/merkle, proof/verify_test.go: consistencyProofs as (first size, second size, proof).
CONSISTENCY_PROOFS = [
    (1, 1, []),
    (1, 8, [h("96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7"),
            h("5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e"),
            h("6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4")]),
    (6, 8, [h("0ebc5d3437fbe2db158b9f126a1d118e308181031d0a949f8dededebc558ef6a"),
            h("ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0"),
            h("d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7")]),
    (2, 5, [h("5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e"),
            h("bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b")]),
    (6, 7, [h("0ebc5d3437fbe2db158b9f126a1d118e308181031d0a949f8dededebc558ef6a"),
            h("b08693ec2e721597130641e8211e7eedccb4c26413963eee6c1e2ed16ffb1a5f"),
            h("d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7")]),
]

# transparency-dev/merkle, proof/verify_test.go: sha256SomeHash and sha256EmptyTreeHash.
SOME_HASH = h("abacaba000000000000000000000000000000000000000000060061e00123456")
EMPTY_TREE_HASH = h("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")


def _sha256_node(left: bytes, right: bytes) -> bytes:
    """An interior node hashed here with hashlib, not with the module under test."""
    return hashlib.sha256(b"\x01" + left + right).digest()


def N(level: int, index: int) -> bytes:
    return NODE_HASHES[level][index]


# proof/proof_test.go's node ids for each proof within the reference tree of 8 leaves, as (level, index) nodes.
# Where Go marks a "rehash" (the imperfect right subtree, e.g. "l=hash(i,j)" of the tree of 7), the node stands for
# that subtree: MTH(D[4:7]) = node(i, j).
MTH_4_7 = _sha256_node(N(1, 2), N(0, 6))
INCLUSION_SHAPES = {
    (0, 2): [N(0, 1)], (1, 2): [N(0, 0)], (1, 3): [N(0, 0), N(0, 2)],
    (0, 7): [N(0, 1), N(1, 1), MTH_4_7], (1, 7): [N(0, 0), N(1, 1), MTH_4_7],
    (2, 7): [N(0, 3), N(1, 0), MTH_4_7], (3, 7): [N(0, 2), N(1, 0), MTH_4_7],
    (4, 7): [N(0, 5), N(0, 6), N(2, 0)], (5, 7): [N(0, 4), N(0, 6), N(2, 0)], (6, 7): [N(1, 2), N(2, 0)],
    (2, 4): [N(0, 3), N(1, 0)], (3, 5): [N(0, 2), N(1, 0), N(0, 4)], (3, 6): [N(0, 2), N(1, 0), N(1, 2)],
    (4, 6): [N(0, 5), N(2, 0)],
}
CONSISTENCY_SHAPES = {
    (1, 2): [N(0, 1)], (1, 4): [N(0, 1), N(1, 1)], (1, 6): [N(0, 1), N(1, 1), N(1, 2)], (2, 3): [N(0, 2)],
    (2, 8): [N(1, 1), N(2, 1)], (3, 7): [N(0, 2), N(0, 3), N(1, 0), MTH_4_7], (4, 7): [MTH_4_7],
    (5, 7): [N(0, 4), N(0, 5), N(0, 6), N(2, 0)], (6, 7): [N(1, 2), N(0, 6), N(2, 0)],
    (7, 8): [N(0, 6), N(0, 7), N(1, 2), N(2, 0)], (2, 4): [N(1, 1)], (3, 5): [N(0, 2), N(0, 3), N(1, 0), N(0, 4)],
    (3, 6): [N(0, 2), N(0, 3), N(1, 0), N(1, 2)], (4, 6): [N(1, 2)], (1, 7): [N(0, 1), N(1, 1), MTH_4_7],
    **{(n, n): [] for n in (1, 2, 3, 4, 5, 7, 8)},
}

INCLUSION_IDS = [f"leaf {index} of {size}" for index, size, _ in INCLUSION_PROOFS]
CONSISTENCY_IDS = [f"{first} to {second}" for first, second, _ in CONSISTENCY_PROOFS]
REFERENCE_LEAVES = [leaf_hash(entry) for entry in LEAF_INPUTS]
REFERENCE = subtree_of(REFERENCE_LEAVES)


def verifies(check, *arguments) -> bool:
    """Whether `check` (verify_inclusion or verify_consistency) accepts: they return nothing, or raise ProofError."""
    try:
        check(*arguments)
    except ProofError:
        return False
    return True


# ------------------------------------------------------------------------------------- the reference tree

def test_the_empty_tree_hash_is_sha256_of_nothing():
    assert EMPTY_ROOT == root_of([]) == ROOT_HASHES[0] == EMPTY_TREE_HASH


def test_leaf_and_node_hashes_match_the_published_rfc_6962_hasher_vectors():
    # transparency-dev/merkle, rfc6962/rfc6962_test.go: TestRFC6962Hasher.
    assert leaf_hash(b"") == h("6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d")
    assert leaf_hash(b"L123456") == h("395aa064aa4c29f7010acfe3f25db9485bbd4b91897b6ad7ad547639252b4d56")
    assert node_hash(b"N123", b"N456") == h("aa217fe888e47007fa15edab33c2b492a722cb106c64667fc2b044444de66bbb")


def test_every_perfect_subtree_of_the_reference_tree_has_its_published_hash():
    for level, hashes in enumerate(NODE_HASHES):
        for index, expected in enumerate(hashes):
            assert REFERENCE(index << level, (index + 1) << level) == expected, (level, index)


@pytest.mark.parametrize("size", range(9))
def test_the_root_of_each_size_of_the_reference_tree_is_the_published_one(size):
    assert root_of(REFERENCE_LEAVES[:size]) == ROOT_HASHES[size]


@pytest.mark.parametrize(("index", "size", "path"), INCLUSION_PROOFS, ids=INCLUSION_IDS)
def test_each_published_inclusion_proof_is_produced_and_verified(index, size, path):
    assert inclusion_proof(index, size, REFERENCE) == path
    assert root_from_inclusion(index, size, REFERENCE_LEAVES[index], path) == ROOT_HASHES[size]
    assert verifies(verify_inclusion, index, size, REFERENCE_LEAVES[index], path, ROOT_HASHES[size])


@pytest.mark.parametrize(("first", "second", "proof"), CONSISTENCY_PROOFS, ids=CONSISTENCY_IDS)
def test_each_published_consistency_proof_is_produced_and_verified(first, second, proof):
    assert consistency_proof(first, second, REFERENCE) == proof
    assert verifies(verify_consistency, first, second, ROOT_HASHES[first], ROOT_HASHES[second], proof)


@pytest.mark.parametrize(("index", "size"), INCLUSION_SHAPES)
def test_inclusion_proofs_take_the_published_nodes_of_the_reference_tree(index, size):
    assert inclusion_proof(index, size, REFERENCE) == INCLUSION_SHAPES[index, size]


@pytest.mark.parametrize(("first", "second"), CONSISTENCY_SHAPES)
def test_consistency_proofs_take_the_published_nodes_of_the_reference_tree(first, second):
    assert consistency_proof(first, second, REFERENCE) == CONSISTENCY_SHAPES[first, second]


# The corruptions proof/verify_test.go applies to each published proof (corruptInclusionProof and
# corruptConsistencyProof), written out here as (what, arguments).

def _flip(value: bytes, bit: int) -> bytes:
    return bytes([value[0] ^ (1 << bit)]) + value[1:]


def _inclusion_corruptions(index, size, path, root, leaf):
    probes = [
        ("leaf index - 1", (index - 1, size, leaf, path, root)),
        ("leaf index + 1", (index + 1, size, leaf, path, root)),
        ("leaf index ^ 2", (index ^ 2, size, leaf, path, root)),
        ("tree size * 2", (index, size * 2, leaf, path, root)),
        ("tree size / 2", (index, size // 2, leaf, path, root)),
        ("wrong leaf", (index, size, b"WrongLeaf", path, root)),
        ("empty root", (index, size, leaf, path, EMPTY_TREE_HASH)),
        ("random root", (index, size, leaf, path, SOME_HASH)),
        ("trailing garbage", (index, size, leaf, [*path, b""], root)),
        ("trailing root", (index, size, leaf, [*path, root], root)),
        ("preceding garbage", (index, size, leaf, [b"", *path], root)),
        ("preceding root", (index, size, leaf, [root, *path], root)),
    ]
    for i in range(len(path)):
        probes.append((f"proof[{i}] bit 3 flipped", (index, size, leaf, [*path[:i], _flip(path[i], 3),
                                                                           *path[i + 1:]], root)))
    if path:
        probes.append(("removed component", (index, size, leaf, path[:-1], root)))
    if len(path) > 1:
        probes.append(("inserted component", (index, size, leaf, [path[0], SOME_HASH, *path[1:]], root)))
    return probes


def _consistency_corruptions(first, second, first_root, second_root, proof):
    probes = [
        ("size1 - 1", (first - 1, second, first_root, second_root, proof)),
        ("size1 + 1", (first + 1, second, first_root, second_root, proof)),
        ("size1 ^ 2", (first ^ 2, second, first_root, second_root, proof)),
        ("size2 * 2", (first, second * 2, first_root, second_root, proof)),
        ("size2 / 2", (first, second // 2, first_root, second_root, proof)),
        ("wrong root1", (first, second, b"WrongRoot", second_root, proof)),
        ("wrong root2", (first, second, first_root, b"WrongRoot", proof)),
        ("swapped roots", (first, second, second_root, first_root, proof)),
        ("empty proof", (first, second, first_root, second_root, [])),
        ("trailing garbage", (first, second, first_root, second_root, [*proof, b""])),
        ("trailing root1", (first, second, first_root, second_root, [*proof, first_root])),
        ("trailing root2", (first, second, first_root, second_root, [*proof, second_root])),
        ("preceding garbage", (first, second, first_root, second_root, [b"", *proof])),
        ("preceding root1", (first, second, first_root, second_root, [first_root, *proof])),
        ("preceding root2", (first, second, first_root, second_root, [second_root, *proof])),
        ("preceding proof[0]", (first, second, first_root, second_root, [proof[0], *proof])),
        ("truncated proof", (first, second, first_root, second_root, proof[:-1])),
    ]
    for i in range(len(proof)):
        probes.append((f"proof[{i}] bit 4 flipped", (first, second, first_root, second_root,
                                                    [*proof[:i], _flip(proof[i], 4), *proof[i + 1:]])))
    return probes


def _accepted(check, probes) -> list[str]:
    return [what for what, arguments in probes if verifies(check, *arguments)]


@pytest.mark.parametrize(("index", "size", "path"), INCLUSION_PROOFS, ids=INCLUSION_IDS)
def test_every_published_corruption_of_an_inclusion_proof_is_refused(index, size, path):
    probes = _inclusion_corruptions(index, size, path, ROOT_HASHES[size], REFERENCE_LEAVES[index])
    assert _accepted(verify_inclusion, probes) == []


@pytest.mark.parametrize(("first", "second", "proof"), [p for p in CONSISTENCY_PROOFS if p[2]],
                         ids=[i for i, p in zip(CONSISTENCY_IDS, CONSISTENCY_PROOFS) if p[2]])
def test_every_published_corruption_of_a_consistency_proof_is_refused(first, second, proof):
    probes = _consistency_corruptions(first, second, ROOT_HASHES[first], ROOT_HASHES[second], proof)
    assert _accepted(verify_consistency, probes) == []


LEAF_HASH = leaf_hash(b"data")


@pytest.mark.parametrize(("root", "leaf", "accepted"), [
    (LEAF_HASH, LEAF_HASH, True),
    (LEAF_HASH, b"", False),
    (b"", LEAF_HASH, False),
    (b"", b"", False),
], ids=["leaf and root alike", "empty leaf", "empty root", "empty leaf and root"])
def test_a_single_entry_tree_proves_its_leaf_only_when_leaf_and_root_are_that_hash(root, leaf, accepted):
    # transparency-dev/merkle, proof/verify_test.go: TestVerifyInclusionSingleEntry.
    assert verifies(verify_inclusion, 0, 1, leaf, [], root) is accepted


@pytest.mark.parametrize(("index", "size"), [(0, 0), (0, 1), (1, 0), (2, 1)])
def test_an_empty_path_proves_no_malformed_leaf_or_root(index, size):
    # transparency-dev/merkle, proof/verify_test.go: TestVerifyInclusion's probes.
    for leaf, root in ((SOME_HASH, b""), (b"", EMPTY_TREE_HASH), (SOME_HASH, EMPTY_TREE_HASH)):
        with pytest.raises(ProofError):
            verify_inclusion(index, size, leaf, [], root)


ROOT1, ROOT2 = b"don't care 1", b"don't care 2"


@pytest.mark.parametrize(("first", "second", "first_root", "second_root", "proof", "accepted"), [
    (0, 0, ROOT1, ROOT2, [], False),
    (1, 1, ROOT1, ROOT2, [], False),
    (0, 0, ROOT1, ROOT1, [], True),
    (0, 1, ROOT1, ROOT2, [], True),
    (1, 1, ROOT2, ROOT2, [], True),
    (1, 0, ROOT1, ROOT2, [], False),
    (2, 1, ROOT1, ROOT2, [], False),
    (1, 2, ROOT1, ROOT2, [], False),
    (0, 0, EMPTY_TREE_HASH, ROOT2, [], False),
    (1, 1, EMPTY_TREE_HASH, ROOT2, [], False),
    (0, 0, EMPTY_TREE_HASH, EMPTY_TREE_HASH, [EMPTY_TREE_HASH], False),
    (0, 1, EMPTY_TREE_HASH, EMPTY_TREE_HASH, [EMPTY_TREE_HASH], False),
    (1, 1, EMPTY_TREE_HASH, EMPTY_TREE_HASH, [EMPTY_TREE_HASH], False),
])
def test_the_published_consistency_edge_cases_verify_or_fail_as_published(first, second, first_root, second_root,
                                                                           proof, accepted):
    # transparency-dev/merkle, proof/verify_test.go: TestVerifyConsistency's table (sizes always consistent, time
    # travel to the past, empty proofs, roots that do not match, proofs that should be empty).
    assert verifies(verify_consistency, first, second, first_root, second_root, proof) is accepted


def test_an_inclusion_path_pins_its_tree_size_only_through_the_root_it_is_checked_against():
    """RFC 9162 §2.1.3.2 reads the size only for the shape of the leaf's path: the first leaf's path in the tree of 3
    has the shape it has in the tree of 4, so it leads to the root of 3 under either size. A verifier must take the
    size and the root from one signed checkpoint (as docs/audit/verify_export.py does); the property tests below
    check that a path for one size never leads to another size's root."""
    path = inclusion_proof(0, 3, REFERENCE)
    assert verifies(verify_inclusion, 0, 4, REFERENCE_LEAVES[0], path, ROOT_HASHES[3])
    assert not verifies(verify_inclusion, 0, 4, REFERENCE_LEAVES[0], path, ROOT_HASHES[4])


# ------------------------------------------------------------- RFC 9162's recursive definitions, written out

def _mth(entries: list[bytes]) -> bytes:
    """§2.1.1 MTH, by its recursion over the entries, with hashlib."""
    if not entries:
        return hashlib.sha256(b"").digest()
    if len(entries) == 1:
        return hashlib.sha256(b"\x00" + entries[0]).digest()
    k = _largest_power_of_two_below(len(entries))
    return _sha256_node(_mth(entries[:k]), _mth(entries[k:]))


def _largest_power_of_two_below(n: int) -> int:
    k = 1
    while k * 2 < n:
        k *= 2
    return k


def _path(m: int, entries: list[bytes]) -> list[bytes]:
    """§2.1.3.1 PATH(m, D[n])."""
    if len(entries) == 1:
        return []
    k = _largest_power_of_two_below(len(entries))
    if m < k:
        return _path(m, entries[:k]) + [_mth(entries[k:])]
    return _path(m - k, entries[k:]) + [_mth(entries[:k])]


def _subproof(m: int, entries: list[bytes], whole: bool) -> list[bytes]:
    """§2.1.4.1 SUBPROOF(m, D[n], b)."""
    if m == len(entries):
        return [] if whole else [_mth(entries)]
    k = _largest_power_of_two_below(len(entries))
    if m <= k:
        return _subproof(m, entries[:k], whole) + [_mth(entries[k:])]
    return _subproof(m - k, entries[k:], False) + [_mth(entries[:k])]


# ------------------------------------------------------------------------------------------ random logs

MAX_LEAVES = 300
PROPERTY = settings(max_examples=25, deadline=None)


class Log:
    """A random log: its distinct entries, their leaf hashes, and MTH of any prefix (memoised)."""

    def __init__(self, entries: list[bytes]) -> None:
        self.entries = entries
        self.leaves = [leaf_hash(entry) for entry in entries]
        self.subtree = subtree_of(self.leaves)

    def root(self, size: int) -> bytes:
        return self.subtree(0, size) if size else EMPTY_ROOT

    def __repr__(self) -> str:
        return f"Log({len(self.entries)} entries: {self.entries[:4]!r}…)"


@st.composite
def logs(draw, min_size: int = 1, max_size: int = MAX_LEAVES) -> Log:
    size = draw(st.integers(min_size, max_size))
    return Log(draw(st.lists(st.binary(max_size=12), min_size=size, max_size=size, unique=True)))


@st.composite
def inclusions(draw, min_size: int = 1, max_size: int = MAX_LEAVES):
    """(log, tree size, leaf index, path) for a tree of some size over a prefix of the log."""
    log = draw(logs(min_size, max_size))
    size = draw(st.integers(min_size, len(log.leaves)))
    index = draw(st.integers(0, size - 1))
    return log, size, index, inclusion_proof(index, size, log.subtree)


@st.composite
def consistencies(draw, proper: bool = True, max_size: int = MAX_LEAVES):
    """(log, first size, second size, proof); `proper`: 0 < first < second, so that the proof is not empty."""
    log = draw(logs(2 if proper else 1, max_size))
    second = draw(st.integers(2 if proper else 1, len(log.leaves)))
    first = draw(st.integers(1, second - 1) if proper else st.integers(0, second))
    return log, first, second, consistency_proof(first, second, log.subtree)


hashes = st.binary(min_size=32, max_size=32)


def _alter(value: bytes, data) -> bytes:
    """`value` with one bit flipped, the bit drawn."""
    bit = data.draw(st.integers(0, len(value) * 8 - 1), label="bit")
    return value[:bit // 8] + bytes([value[bit // 8] ^ (1 << bit % 8)]) + value[bit // 8 + 1:]


def _another(data, candidates: range, value: int, label: str) -> int:
    """A number of `candidates` other than `value` (the example is dropped when there is none)."""
    others = [n for n in candidates if n != value]
    assume(others)
    return data.draw(st.sampled_from(others), label=label)


def _swap_two_different_steps(proof: list[bytes], data) -> list[bytes]:
    i, j = data.draw(st.lists(st.integers(0, len(proof) - 1), min_size=2, max_size=2, unique=True), label="steps")
    swapped = list(proof)
    swapped[i], swapped[j] = proof[j], proof[i]
    return swapped


# ------------------------------------------------------------------------------- inclusion, as RFC 9162 says

@PROPERTY
@given(logs(max_size=64))
def test_the_tree_hash_is_rfc_9162s_recursive_definition(log):
    for size in range(len(log.entries) + 1):
        assert root_of(log.leaves[:size]) == _mth(log.entries[:size])


@PROPERTY
@given(inclusions(max_size=64))
def test_inclusion_proofs_are_the_paths_rfc_9162_defines(case):
    log, size, index, path = case
    assert path == _path(index, log.entries[:size])


@PROPERTY
@given(consistencies(proper=False, max_size=64))
def test_consistency_proofs_are_the_proofs_rfc_9162_defines(case):
    log, first, second, proof = case
    assert proof == (_subproof(first, log.entries[:second], True) if first else [])


@PROPERTY
@given(inclusions())
def test_every_inclusion_proof_verifies_against_the_root_of_its_tree(case):
    log, size, index, path = case
    assert root_from_inclusion(index, size, log.leaves[index], path) == root_of(log.leaves[:size])
    assert verifies(verify_inclusion, index, size, log.leaves[index], path, root_of(log.leaves[:size]))


@PROPERTY
@given(inclusions(), st.data())
def test_an_altered_leaf_fails_the_inclusion_check(case, data):
    log, size, index, path = case
    with pytest.raises(ProofError):
        verify_inclusion(index, size, _alter(log.leaves[index], data), path, log.root(size))


@PROPERTY
@given(inclusions(), st.data())
def test_an_altered_root_fails_the_inclusion_check(case, data):
    log, size, index, path = case
    with pytest.raises(ProofError):
        verify_inclusion(index, size, log.leaves[index], path, _alter(log.root(size), data))


@PROPERTY
@given(inclusions(min_size=2), st.data())
def test_an_altered_proof_step_fails_the_inclusion_check(case, data):
    log, size, index, path = case
    step = data.draw(st.integers(0, len(path) - 1), label="step")
    altered = [*path[:step], _alter(path[step], data), *path[step + 1:]]
    with pytest.raises(ProofError):
        verify_inclusion(index, size, log.leaves[index], altered, log.root(size))


@PROPERTY
@given(inclusions(), st.data(), hashes)
def test_an_added_proof_step_fails_the_inclusion_check(case, data, extra):
    log, size, index, path = case
    at = data.draw(st.integers(0, len(path)), label="at")
    with pytest.raises(ProofError):
        verify_inclusion(index, size, log.leaves[index], [*path[:at], extra, *path[at:]], log.root(size))


@PROPERTY
@given(inclusions(min_size=2), st.data())
def test_a_removed_proof_step_fails_the_inclusion_check(case, data):
    log, size, index, path = case
    step = data.draw(st.integers(0, len(path) - 1), label="step")
    with pytest.raises(ProofError):
        verify_inclusion(index, size, log.leaves[index], path[:step] + path[step + 1:], log.root(size))


@PROPERTY
@given(inclusions(min_size=3), st.data())
def test_two_swapped_proof_steps_fail_the_inclusion_check(case, data):
    log, size, index, path = case
    assume(len(path) >= 2)  # not the last leaf of 3, 5, 9…: its path is the one left subtree
    with pytest.raises(ProofError):
        verify_inclusion(index, size, log.leaves[index], _swap_two_different_steps(path, data), log.root(size))


@PROPERTY
@given(inclusions(min_size=2), st.data())
def test_another_leaf_index_fails_the_inclusion_check(case, data):
    log, size, index, path = case
    other = _another(data, range(size), index, "other index")
    with pytest.raises(ProofError):
        verify_inclusion(other, size, log.leaves[index], path, log.root(size))


@PROPERTY
@given(inclusions(min_size=2), st.data())
def test_a_path_for_one_tree_size_fails_against_another_sizes_root(case, data):
    log, size, index, path = case
    other = _another(data, range(index + 1, len(log.leaves) + 1), size, "other size")
    with pytest.raises(ProofError):
        verify_inclusion(index, other, log.leaves[index], path, log.root(other))


# ----------------------------------------------------------------------------------------------- consistency

@PROPERTY
@given(consistencies(proper=False))
def test_every_consistency_proof_verifies_between_the_two_roots(case):
    log, first, second, proof = case
    assert verifies(verify_consistency, first, second, root_of(log.leaves[:first]), root_of(log.leaves[:second]),
                    proof)


@PROPERTY
@given(consistencies(), st.data())
def test_an_altered_first_root_fails_the_consistency_check(case, data):
    log, first, second, proof = case
    with pytest.raises(ProofError):
        verify_consistency(first, second, _alter(log.root(first), data), log.root(second), proof)


@PROPERTY
@given(consistencies(), st.data())
def test_an_altered_second_root_fails_the_consistency_check(case, data):
    log, first, second, proof = case
    with pytest.raises(ProofError):
        verify_consistency(first, second, log.root(first), _alter(log.root(second), data), proof)


@PROPERTY
@given(consistencies(), st.data())
def test_an_altered_proof_step_fails_the_consistency_check(case, data):
    log, first, second, proof = case
    step = data.draw(st.integers(0, len(proof) - 1), label="step")
    altered = [*proof[:step], _alter(proof[step], data), *proof[step + 1:]]
    with pytest.raises(ProofError):
        verify_consistency(first, second, log.root(first), log.root(second), altered)


@PROPERTY
@given(consistencies(), st.data(), hashes)
def test_an_added_proof_step_fails_the_consistency_check(case, data, extra):
    log, first, second, proof = case
    at = data.draw(st.integers(0, len(proof)), label="at")
    with pytest.raises(ProofError):
        verify_consistency(first, second, log.root(first), log.root(second), [*proof[:at], extra, *proof[at:]])


@PROPERTY
@given(consistencies(), st.data())
def test_a_removed_proof_step_fails_the_consistency_check(case, data):
    log, first, second, proof = case
    step = data.draw(st.integers(0, len(proof) - 1), label="step")
    with pytest.raises(ProofError):
        verify_consistency(first, second, log.root(first), log.root(second), proof[:step] + proof[step + 1:])


@PROPERTY
@given(consistencies(), st.data())
def test_two_swapped_proof_steps_fail_the_consistency_check(case, data):
    log, first, second, proof = case
    assume(len(proof) >= 2)  # not (1, 2), (2, 3), (2, 4), (4, 8)…, whose proofs are one subtree
    with pytest.raises(ProofError):
        verify_consistency(first, second, log.root(first), log.root(second), _swap_two_different_steps(proof, data))


@PROPERTY
@given(consistencies(), st.data())
def test_a_proof_for_another_first_size_fails_the_consistency_check(case, data):
    log, first, second, proof = case
    other = _another(data, range(1, second), first, "other first size")
    with pytest.raises(ProofError):
        verify_consistency(other, second, log.root(other), log.root(second), proof)


@PROPERTY
@given(consistencies(), st.data())
def test_a_proof_for_another_second_size_fails_the_consistency_check(case, data):
    log, first, second, proof = case
    other = _another(data, range(first + 1, len(log.leaves) + 1), second, "other size")
    with pytest.raises(ProofError):
        verify_consistency(first, other, log.root(first), log.root(other), proof)


# ------------------------------------------------------------------------------------------------- Frontier

@PROPERTY
@given(logs())
def test_the_frontier_root_equals_the_tree_root_after_every_append(log):
    frontier = Frontier()
    assert frontier.root() == EMPTY_ROOT
    for size, leaf in enumerate(log.leaves, start=1):
        frontier.append(leaf)
        assert frontier.size == size
        assert frontier.root() == log.root(size)  # root_of(log.leaves[:size]), its subtrees memoised across sizes
    assert frontier.root() == root_of(log.leaves)


@PROPERTY
@given(logs())
def test_the_frontier_reports_exactly_the_perfect_subtrees_each_append_completes(log):
    frontier, reported = Frontier(), []
    for index, leaf in enumerate(log.leaves):
        completed = frontier.append(leaf)
        size = index + 1
        # The perfect subtrees that end with this leaf: one per power of two dividing the new size.
        levels = range((size & -size).bit_length())
        assert [(level, node_index) for level, node_index, _ in completed] == [
            (level, (size >> level) - 1) for level in levels]
        for level, node_index, node in completed:
            assert node == log.subtree(node_index << level, (node_index + 1) << level)
        reported += [(level, node_index) for level, node_index, _ in completed]
        # What it keeps is the right edge: the perfect subtrees whose sizes are the binary digits of the size.
        assert [level for level, _ in frontier.nodes] == frontier_levels(size)
        assert [node for _, node in frontier.nodes] == [
            log.subtree(i << level, (i + 1) << level) for level, i in frontier_positions(size)]
    every_perfect_subtree = [(level, i) for level in range(len(log.leaves).bit_length())
                             for i in range(len(log.leaves) >> level)]
    assert sorted(reported) == sorted(every_perfect_subtree)


@PROPERTY
@given(logs(min_size=2), st.data())
def test_a_frontier_restored_from_its_right_edge_grows_the_same_tree(log, data):
    size = data.draw(st.integers(0, len(log.leaves)), label="restored at")
    edge = [(level, log.subtree(i << level, (i + 1) << level)) for level, i in frontier_positions(size)]
    frontier = Frontier(size, edge)
    assert frontier.root() == log.root(size)
    for leaf in log.leaves[size:]:
        frontier.append(leaf)
    assert frontier.root() == log.root(len(log.leaves))


def test_a_frontier_refuses_a_right_edge_that_does_not_fit_its_size():
    edge = [(2, NODE_HASHES[2][0]), (0, NODE_HASHES[0][4])]  # the tree of 5
    assert Frontier(5, edge).root() == ROOT_HASHES[5]
    for size in (4, 6, 7):
        with pytest.raises(ValueError):
            Frontier(size, edge)


def test_a_frontier_pushed_leaf_by_leaf_has_the_root_and_right_edge_of_one_appended_to():
    pushed, appended = Frontier(), Frontier()
    for n in range(1, 70):
        leaf = leaf_hash(n.to_bytes(2, "big"))
        pushed.push(leaf)
        appended.append(leaf)
        assert (pushed.size, pushed.nodes, pushed.root()) == (appended.size, appended.nodes, appended.root())
