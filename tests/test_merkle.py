"""RFC 6962 / RFC 9162 Merkle trees: published test vectors, a slow reference, attacks.

The vectors (leaves, roots of sizes 1..8, inclusion and consistency paths, and the
corruption probes) are those of transparency-dev/merkle, ``proof/verify_test.go``, and
the hasher vectors of ``rfc6962/rfc6962_test.go`` in the same repository (the Go
implementation used by Certificate Transparency logs). The reference implementation
below is RFC 6962 §2.1 transcribed literally (recursive MTH, PATH, PROOF/SUBPROOF).
"""

from __future__ import annotations

import doctest
import hashlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import rummyguard.events.merkle as merkle_module
from rummyguard.events.merkle import (
    EMPTY_ROOT,
    MerkleError,
    MerkleTree,
    ProofError,
    consistency_proof_size,
    inclusion_path_size,
    leaf_hash,
    node_hash,
    root_from_inclusion_path,
    root_hash,
    root_hash_of_leaf_hashes,
    verify_consistency,
    verify_inclusion,
)

# --- vectors: transparency-dev/merkle proof/verify_test.go ------------------------------
LEAVES = [
    bytes.fromhex(h)
    for h in [
        "",
        "00",
        "10",
        "2021",
        "3031",
        "40414243",
        "5051525354555657",
        "606162636465666768696a6b6c6d6e6f",
    ]
]
ROOTS = [
    bytes.fromhex(h)
    for h in [
        "6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d",
        "fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125",
        "aeb6bcfe274b70a14fb067a5e5578264db0fa9b51af5e0ba159158f329e06e77",
        "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
        "4e3bbb1f7b478dcfe71fb631631519a3bca12c9aefca1612bfce4c13a86264d4",
        "76e67dadbcdf1e10e1b74ddc608abd2f98dfb16fbce75277b5232a127f2087ef",
        "ddb89be403809e325750d3d263cd78929c2942b7942a34b77e122c9594a74c8c",
        "5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328",
    ]
]


def _hexes(*hs: str) -> list[bytes]:
    return [bytes.fromhex(h) for h in hs]


# (leaf index, 0-based; tree size; path). The Go file numbers leaves from 1.
INCLUSION_VECTORS = [
    (0, 1, []),
    (
        0,
        8,
        _hexes(
            "96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7",
            "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
            "6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4",
        ),
    ),
    (
        5,
        8,
        _hexes(
            "bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b",
            "ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0",
            "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
        ),
    ),
    (2, 3, _hexes("fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125")),
    (
        1,
        5,
        _hexes(
            "6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d",
            "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
            "bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b",
        ),
    ),
]

# (old size, new size, proof)
CONSISTENCY_VECTORS = [
    (1, 1, []),
    (
        1,
        8,
        _hexes(
            "96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7",
            "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
            "6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4",
        ),
    ),
    (
        6,
        8,
        _hexes(
            "0ebc5d3437fbe2db158b9f126a1d118e308181031d0a949f8dededebc558ef6a",
            "ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0",
            "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
        ),
    ),
    (
        2,
        5,
        _hexes(
            "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
            "bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b",
        ),
    ),
    (
        6,
        7,
        _hexes(
            "0ebc5d3437fbe2db158b9f126a1d118e308181031d0a949f8dededebc558ef6a",
            "b08693ec2e721597130641e8211e7eedccb4c26413963eee6c1e2ed16ffb1a5f",
            "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
        ),
    ),
]

SOME_HASH = bytes.fromhex("abacaba000000000000000000000000000000000000000000060061e00123456")


# --- the reference: RFC 6962 §2.1, literally ------------------------------------------
def ref_mth(d: list[bytes]) -> bytes:
    n = len(d)
    if n == 0:
        return hashlib.sha256(b"").digest()
    if n == 1:
        return hashlib.sha256(b"\x00" + d[0]).digest()
    k = 1
    while k * 2 < n:
        k *= 2
    return hashlib.sha256(b"\x01" + ref_mth(d[:k]) + ref_mth(d[k:])).digest()


def ref_path(m: int, d: list[bytes]) -> list[bytes]:
    n = len(d)
    if n == 1:
        return []
    k = 1
    while k * 2 < n:
        k *= 2
    if m < k:
        return [*ref_path(m, d[:k]), ref_mth(d[k:])]
    return [*ref_path(m - k, d[k:]), ref_mth(d[:k])]


def ref_subproof(m: int, d: list[bytes], b: bool) -> list[bytes]:
    n = len(d)
    if m == n:
        return [] if b else [ref_mth(d)]
    k = 1
    while k * 2 < n:
        k *= 2
    if m <= k:
        return [*ref_subproof(m, d[:k], b), ref_mth(d[k:])]
    return [*ref_subproof(m - k, d[k:], False), ref_mth(d[:k])]


def ref_proof(m: int, d: list[bytes]) -> list[bytes]:
    return ref_subproof(m, d, True)


# --- published vectors -------------------------------------------------------------------
def test_doctests() -> None:
    assert doctest.testmod(merkle_module).failed == 0


def test_hasher_vectors() -> None:
    # transparency-dev/merkle rfc6962/rfc6962_test.go
    assert EMPTY_ROOT.hex() == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    assert leaf_hash(b"").hex() == (
        "6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d"
    )
    assert leaf_hash(b"L123456").hex() == (
        "395aa064aa4c29f7010acfe3f25db9485bbd4b91897b6ad7ad547639252b4d56"
    )
    assert node_hash(b"N123", b"N456").hex() == (
        "aa217fe888e47007fa15edab33c2b492a722cb106c64667fc2b044444de66bbb"
    )
    # Domain separation: a node is not the leaf of its children's concatenation.
    a, b = leaf_hash(b"Hello"), leaf_hash(b"World")
    assert node_hash(a, b) != leaf_hash(a + b)
    assert node_hash(a, b) != node_hash(b, a)


@pytest.mark.parametrize("n", range(1, 9))
def test_roots_of_the_vector_trees(n: int) -> None:
    assert root_hash(LEAVES[:n]) == ROOTS[n - 1]
    assert MerkleTree.from_leaves(LEAVES).root(n) == ROOTS[n - 1]
    assert MerkleTree.from_leaves(LEAVES[:n]).root() == ROOTS[n - 1]
    assert ref_mth(LEAVES[:n]) == ROOTS[n - 1]


def test_empty_tree_root() -> None:
    assert root_hash([]) == EMPTY_ROOT
    assert MerkleTree().root() == EMPTY_ROOT
    assert MerkleTree.from_leaves(LEAVES).root(0) == EMPTY_ROOT


def test_incremental_extend_matches_one_build() -> None:
    tree = MerkleTree()
    for n, leaf in enumerate(LEAVES, start=1):
        tree.extend([leaf_hash(leaf)])
        assert tree.root() == ROOTS[n - 1]
        assert tree.size == n
    tree.extend([])
    assert tree.root() == ROOTS[7]


@pytest.mark.parametrize(("index", "size", "path"), INCLUSION_VECTORS)
def test_inclusion_vectors(index: int, size: int, path: list[bytes]) -> None:
    tree = MerkleTree.from_leaves(LEAVES)
    assert tree.inclusion_path(index, size) == path
    assert ref_path(index, LEAVES[:size]) == path
    assert inclusion_path_size(index, size) == len(path)
    verify_inclusion(leaf_hash(LEAVES[index]), index, size, path, ROOTS[size - 1])
    assert root_from_inclusion_path(leaf_hash(LEAVES[index]), index, size, path) == (
        ROOTS[size - 1]
    )


@pytest.mark.parametrize(("old", "new", "proof"), CONSISTENCY_VECTORS)
def test_consistency_vectors(old: int, new: int, proof: list[bytes]) -> None:
    tree = MerkleTree.from_leaves(LEAVES)
    assert tree.consistency_proof(old, new) == proof
    assert ref_proof(old, LEAVES[:new]) == proof
    assert consistency_proof_size(old, new) == len(proof)
    verify_consistency(old, new, ROOTS[old - 1], ROOTS[new - 1], proof)


def _flip(h: bytes, bit: int) -> bytes:
    return bytes([h[0] ^ bit]) + h[1:]


def _inclusion_probes(
    index: int, size: int, path: list[bytes], root: bytes, leaf: bytes
) -> list[tuple[str, tuple[bytes, int, int, list[bytes], bytes]]]:
    """The corruptions of verify_test.go's corruptInclusionProof, each must fail."""
    probes = [
        ("index - 1", (leaf, index - 1, size, path, root)),
        ("index + 1", (leaf, index + 1, size, path, root)),
        ("index ^ 2", (leaf, index ^ 2, size, path, root)),
        ("size * 2", (leaf, index, size * 2, path, root)),
        ("size // 2", (leaf, index, size // 2, path, root)),
        ("wrong leaf", (leaf_hash(b"WrongLeaf"), index, size, path, root)),
        ("empty root", (leaf, index, size, path, EMPTY_ROOT)),
        ("random root", (leaf, index, size, path, SOME_HASH)),
        ("trailing garbage", (leaf, index, size, [*path, b""], root)),
        ("trailing root", (leaf, index, size, [*path, root], root)),
        ("preceding garbage", (leaf, index, size, [b"", *path], root)),
        ("preceding root", (leaf, index, size, [root, *path], root)),
    ]
    for i in range(len(path)):
        wrong = list(path)
        wrong[i] = _flip(wrong[i], 8)
        probes.append((f"modified path[{i}]", (leaf, index, size, wrong, root)))
    if path:
        probes.append(("removed component", (leaf, index, size, path[:-1], root)))
    if len(path) > 1:
        probes.append(
            ("inserted component", (leaf, index, size, [path[0], SOME_HASH, *path[1:]], root))
        )
    return probes


@pytest.mark.parametrize(("index", "size", "path"), INCLUSION_VECTORS)
def test_corrupted_inclusion_proofs_are_rejected(index: int, size: int, path: list[bytes]) -> None:
    leaf = leaf_hash(LEAVES[index])
    accepted = []
    for desc, args in _inclusion_probes(index, size, path, ROOTS[size - 1], leaf):
        try:
            verify_inclusion(*args)
        except ProofError:
            continue
        accepted.append(desc)
    assert accepted == []


def _consistency_probes(
    old: int, new: int, root1: bytes, root2: bytes, proof: list[bytes]
) -> list[tuple[str, tuple[int, int, bytes, bytes, list[bytes]]]]:
    """The corruptions of verify_test.go's corruptConsistencyProof, each must fail."""
    probes = [
        ("old - 1", (old - 1, new, root1, root2, proof)),
        ("old + 1", (old + 1, new, root1, root2, proof)),
        ("old ^ 2", (old ^ 2, new, root1, root2, proof)),
        ("new * 2", (old, new * 2, root1, root2, proof)),
        ("new // 2", (old, new // 2, root1, root2, proof)),
        ("wrong root1", (old, new, SOME_HASH, root2, proof)),
        ("wrong root2", (old, new, root1, SOME_HASH, proof)),
        ("swapped roots", (old, new, root2, root1, proof)),
        ("empty proof", (old, new, root1, root2, [])),
        ("trailing garbage", (old, new, root1, root2, [*proof, b""])),
        ("trailing root1", (old, new, root1, root2, [*proof, root1])),
        ("trailing root2", (old, new, root1, root2, [*proof, root2])),
        ("preceding garbage", (old, new, root1, root2, [b"", *proof])),
        ("preceding root1", (old, new, root1, root2, [root1, *proof])),
        ("preceding root2", (old, new, root1, root2, [root2, *proof])),
        ("preceding proof[0]", (old, new, root1, root2, [proof[0], *proof])),
        ("truncated proof", (old, new, root1, root2, proof[:-1])),
    ]
    for i in range(len(proof)):
        wrong = list(proof)
        wrong[i] = _flip(wrong[i], 16)
        probes.append((f"modified proof[{i}]", (old, new, root1, root2, wrong)))
    return probes


@pytest.mark.parametrize(("old", "new", "proof"), [v for v in CONSISTENCY_VECTORS if v[2]])
def test_corrupted_consistency_proofs_are_rejected(old: int, new: int, proof: list[bytes]) -> None:
    accepted = []
    for desc, args in _consistency_probes(old, new, ROOTS[old - 1], ROOTS[new - 1], proof):
        try:
            verify_consistency(*args)
        except ProofError:
            continue
        accepted.append(desc)
    assert accepted == []


# --- edge cases and explicit attacks -----------------------------------------------------
def test_consistency_edge_cases() -> None:
    r1, r2 = ROOTS[0], ROOTS[1]
    verify_consistency(1, 1, r1, r1, [])
    with pytest.raises(ProofError, match="different roots"):
        verify_consistency(1, 1, r1, r2, [])
    with pytest.raises(ProofError, match="empty consistency proof"):
        verify_consistency(1, 1, r1, r1, [EMPTY_ROOT])
    # From the empty tree nothing is proven: refused even with an empty proof.
    with pytest.raises(ProofError, match="empty tree"):
        verify_consistency(0, 1, EMPTY_ROOT, r1, [])
    with pytest.raises(ProofError, match="empty tree"):
        verify_consistency(0, 0, EMPTY_ROOT, EMPTY_ROOT, [])
    # Time travel: the old tree is larger than the new one.
    with pytest.raises(ProofError, match="larger"):
        verify_consistency(2, 1, r2, r1, [])
    with pytest.raises(ProofError, match="larger"):
        verify_consistency(8, 6, ROOTS[7], ROOTS[5], CONSISTENCY_VECTORS[2][2])
    with pytest.raises(ProofError, match="needs 1"):
        verify_consistency(1, 2, r1, r2, [])


def test_inclusion_input_checks() -> None:
    leaf = leaf_hash(LEAVES[0])
    for index, size in [(0, 0), (1, 0), (1, 1), (2, 1), (-1, 4)]:
        with pytest.raises(ProofError):
            verify_inclusion(leaf, index, size, [], ROOTS[0])
    # The single-leaf tree: root == leaf hash, the path is empty, hashes must be 32 bytes.
    verify_inclusion(leaf, 0, 1, [], leaf)
    with pytest.raises(ProofError, match="32 bytes"):
        verify_inclusion(b"", 0, 1, [], leaf)
    with pytest.raises(ProofError, match="32 bytes"):
        verify_inclusion(leaf, 0, 1, [], b"")
    with pytest.raises(ProofError, match="integer"):
        verify_inclusion(leaf, False, True, [], leaf)  # type: ignore[arg-type]
    with pytest.raises(ProofError, match="sequence"):
        verify_inclusion(leaf, 0, 2, leaf, ROOTS[1])  # type: ignore[arg-type]
    with pytest.raises(ProofError, match="must be bytes"):
        verify_inclusion(leaf, 0, 2, [leaf.hex()], ROOTS[1])  # type: ignore[list-item]


def test_generation_input_checks() -> None:
    tree = MerkleTree.from_leaves(LEAVES)
    with pytest.raises(MerkleError, match="not in a tree"):
        tree.inclusion_path(8)
    with pytest.raises(MerkleError, match="not in a tree"):
        tree.inclusion_path(3, 3)
    with pytest.raises(MerkleError, match="empty tree"):
        tree.inclusion_path(0, 0)
    with pytest.raises(MerkleError, match="larger than the tree"):
        tree.inclusion_path(0, 9)
    with pytest.raises(MerkleError, match=">= 1"):
        tree.consistency_proof(0, 4)
    with pytest.raises(MerkleError, match="larger than new"):
        tree.consistency_proof(5, 4)
    with pytest.raises(MerkleError, match="larger than the tree"):
        tree.root(9)
    with pytest.raises(MerkleError, match="32 bytes"):
        tree.extend([b"short"])
    assert tree.size == 8 and tree.root() == ROOTS[7]  # a rejected extend changes nothing
    with pytest.raises(MerkleError, match="32 bytes"):
        root_hash_of_leaf_hashes([b"short"])


def test_proof_for_another_leaf_is_rejected() -> None:
    tree = MerkleTree.from_leaves(LEAVES)
    root = tree.root()
    for i in range(8):
        for j in range(8):
            if i == j:
                continue
            # Leaf j's path, claimed for leaf i at i's index, or at j's index.
            with pytest.raises(ProofError):
                verify_inclusion(leaf_hash(LEAVES[i]), i, 8, tree.inclusion_path(j), root)
            with pytest.raises(ProofError):
                verify_inclusion(leaf_hash(LEAVES[i]), j, 8, tree.inclusion_path(j), root)


def test_wrong_tree_size_is_rejected_for_every_leaf() -> None:
    tree = MerkleTree.from_leaves(LEAVES)
    for size in range(1, 9):
        root = tree.root(size)
        for i in range(size):
            path = tree.inclusion_path(i, size)
            for other in range(1, 17):
                if other == size or i >= other:
                    continue
                if inclusion_path_size(i, other) == len(path):
                    continue  # same shape: see test_tree_size_must_come_from_the_checkpoint
                with pytest.raises(ProofError, match="needs"):
                    verify_inclusion(leaf_hash(LEAVES[i]), i, other, path, root)


def test_tree_size_must_come_from_the_checkpoint() -> None:
    """Leaf 0's path in trees of 3 and 4 leaves has the same shape: the verifier does
    the same two hashes, so a root alone does not pin the size. This is inherent to
    RFC 6962, which is why a checkpoint publishes (size, root) together and a proof is
    checked against the checkpoint's size, never one the prover supplies.
    """
    tree = MerkleTree.from_leaves(LEAVES)
    path = tree.inclusion_path(0, 3)
    verify_inclusion(leaf_hash(LEAVES[0]), 0, 3, path, ROOTS[2])
    verify_inclusion(leaf_hash(LEAVES[0]), 0, 4, path, ROOTS[2])  # same computation
    with pytest.raises(ProofError):
        verify_inclusion(leaf_hash(LEAVES[0]), 0, 4, path, ROOTS[3])


def test_interior_node_cannot_pass_as_a_leaf() -> None:
    """A second-preimage attempt: present the two children of the root as one leaf.

    Without the 0x00/0x01 prefixes, the 64 bytes ``left || right`` hashed as a leaf of
    a one-leaf tree would give the root of the two-leaf tree.
    """
    left, right = leaf_hash(LEAVES[0]), leaf_hash(LEAVES[1])
    assert node_hash(left, right) == ROOTS[1]
    with pytest.raises(ProofError):
        verify_inclusion(leaf_hash(left + right), 0, 1, [], ROOTS[1])


def test_forged_consistency_proof_after_rewriting_history() -> None:
    """The operator rewrites leaf 3 and proves the new tree consistent: rejected."""
    honest = MerkleTree.from_leaves(LEAVES[:6])
    forged_leaves = list(LEAVES)
    forged_leaves[3] = b"rewritten game"
    forged = MerkleTree.from_leaves(forged_leaves)
    proof = forged.consistency_proof(6, 8)
    verify_consistency(6, 8, forged.root(6), forged.root(), proof)  # self-consistent
    with pytest.raises(ProofError, match="old root"):
        verify_consistency(6, 8, honest.root(), forged.root(), proof)
    # And the honest proof does not lead to the forged new root.
    good = MerkleTree.from_leaves(LEAVES)
    with pytest.raises(ProofError, match="new root"):
        verify_consistency(6, 8, honest.root(), forged.root(), good.consistency_proof(6, 8))


def test_sizes_across_power_of_two_boundaries() -> None:
    leaves = [i.to_bytes(4, "big") for i in range(1030)]
    tree = MerkleTree.from_leaves(leaves)
    for n in [1, 2, 3, 4, 5, 63, 64, 65, 127, 128, 129, 511, 512, 513, 1023, 1024, 1025, 1030]:
        expected = ref_mth(leaves[:n])
        assert tree.root(n) == expected
        assert root_hash(leaves[:n]) == expected
        last = n - 1
        verify_inclusion(leaf_hash(leaves[last]), last, n, tree.inclusion_path(last, n), expected)
        if n > 1:
            old = n // 2 + 1
            proof = tree.consistency_proof(old, n)
            assert proof == ref_proof(old, leaves[:n])
            verify_consistency(old, n, tree.root(old), expected, proof)


# --- properties against the reference ----------------------------------------------------
@st.composite
def _tree_and_indices(draw: st.DrawFn) -> tuple[list[bytes], int, int]:
    n = draw(st.integers(min_value=1, max_value=70))
    leaves = draw(st.lists(st.binary(max_size=8), min_size=n, max_size=n))
    index = draw(st.integers(min_value=0, max_value=n - 1))
    old = draw(st.integers(min_value=1, max_value=n))
    return leaves, index, old


@settings(max_examples=150, deadline=None)
@given(_tree_and_indices())
def test_matches_reference(case: tuple[list[bytes], int, int]) -> None:
    leaves, index, old = case
    n = len(leaves)
    tree = MerkleTree.from_leaves(leaves)
    root = ref_mth(leaves)
    assert tree.root() == root
    assert root_hash(leaves) == root
    assert tree.root(old) == ref_mth(leaves[:old])

    path = tree.inclusion_path(index)
    assert path == ref_path(index, leaves)
    assert len(path) == inclusion_path_size(index, n)
    verify_inclusion(leaf_hash(leaves[index]), index, n, path, root)

    proof = tree.consistency_proof(old)
    assert proof == ref_proof(old, leaves) if old < n else proof == []
    assert len(proof) == consistency_proof_size(old, n)
    verify_consistency(old, n, tree.root(old), root, proof)

    # Inclusion against an older tree size (an earlier checkpoint) as well.
    if index < old:
        old_path = tree.inclusion_path(index, old)
        assert old_path == ref_path(index, leaves[:old])
        verify_inclusion(leaf_hash(leaves[index]), index, old, old_path, tree.root(old))


@settings(max_examples=150, deadline=None)
@given(_tree_and_indices(), st.data())
def test_mutated_proofs_are_rejected(
    case: tuple[list[bytes], int, int], data: st.DataObject
) -> None:
    leaves, index, old = case
    n = len(leaves)
    tree = MerkleTree.from_leaves(leaves)
    root = tree.root()
    leaf = leaf_hash(leaves[index])
    path = tree.inclusion_path(index)
    if path:
        pos = data.draw(st.integers(0, len(path) - 1))
        bit = data.draw(st.integers(0, 255))
        byte = data.draw(st.integers(0, 31))
        wrong = list(path)
        wrong[pos] = wrong[pos][:byte] + bytes([wrong[pos][byte] ^ (1 << (bit % 8))]) + (
            wrong[pos][byte + 1 :]
        )
        with pytest.raises(ProofError):
            verify_inclusion(leaf, index, n, wrong, root)
        with pytest.raises(ProofError):
            verify_inclusion(leaf, index, n, path[:-1], root)
    with pytest.raises(ProofError):
        verify_inclusion(leaf, index, n, [*path, SOME_HASH], root)
    if inclusion_path_size(index, n + 1) != len(path):
        with pytest.raises(ProofError):
            verify_inclusion(leaf, index, n + 1, path, root)
    if old < n:
        proof = tree.consistency_proof(old)
        old_root = tree.root(old)
        with pytest.raises(ProofError):
            verify_consistency(old, n, old_root, root, proof[:-1])
        with pytest.raises(ProofError):
            verify_consistency(old, n, old_root, root, [*proof, SOME_HASH])
        pos = data.draw(st.integers(0, len(proof) - 1))
        wrong = list(proof)
        wrong[pos] = _flip(wrong[pos], 1)
        with pytest.raises(ProofError):
            verify_consistency(old, n, old_root, root, wrong)
        with pytest.raises(ProofError):
            verify_consistency(n, old, root, old_root, [])
        with pytest.raises(ProofError):
            verify_consistency(old, n, root, old_root, proof)
