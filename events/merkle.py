"""RFC 6962 / RFC 9162 Merkle tree hashing, inclusion and consistency proofs (SHA-256).

A per-game hash chain proves a game's log is internally consistent; it does not prove
the operator did not rewrite a whole game after a complaint. A Merkle tree over all
finished games, published as small checkpoints, does (Certificate Transparency's
answer): anyone holding a checkpoint can check that a game is in it (inclusion) and
that a later checkpoint only appended to an earlier one (consistency).

Hashing (RFC 9162 §2.1.1): the hash of a leaf is ``SHA-256(0x00 || leaf)``, of an
interior node ``SHA-256(0x01 || left || right)``, of the empty tree ``SHA-256("")``.
The two prefixes keep a leaf from ever being passed off as an interior node (a second
preimage attack on the tree). The tree over ``n`` leaves splits at ``k``, the largest
power of two smaller than ``n``, so it is never rebalanced when leaves are appended.

Generation works on :class:`MerkleTree`, which keeps every *perfect* subtree hash
(``2n`` hashes in flat byte strings), so the root of any prefix of the leaves and any
proof against it cost O(log n) after one O(n) build. Verification is the RFC 9162
§2.1.3.2 / §2.1.4.2 algorithm, preceded by strict checks of every input (sizes,
indices, hash lengths, exact path length): a verifier that is lenient about input
shape is how past tamper-evident logs accepted forged proofs.

>>> EMPTY_ROOT.hex()
'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855'
>>> tree = MerkleTree.from_leaves([b"a", b"b", b"c"])
>>> tree.root() == node_hash(node_hash(leaf_hash(b"a"), leaf_hash(b"b")), leaf_hash(b"c"))
True
>>> path = tree.inclusion_path(2)
>>> verify_inclusion(leaf_hash(b"c"), 2, 3, path, tree.root())
>>> try:
...     verify_inclusion(leaf_hash(b"b"), 2, 3, path, tree.root())
... except ProofError as exc:
...     print(exc)
inclusion proof does not lead to the root
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence

__all__ = [
    "EMPTY_ROOT",
    "HASH_SIZE",
    "MerkleError",
    "MerkleTree",
    "ProofError",
    "consistency_proof_size",
    "inclusion_path_size",
    "leaf_hash",
    "node_hash",
    "root_from_inclusion_path",
    "root_hash",
    "root_hash_of_leaf_hashes",
    "verify_consistency",
    "verify_inclusion",
]

HASH_SIZE = 32
"""Bytes in a SHA-256 digest; every hash a proof carries must have exactly this size."""

EMPTY_ROOT = hashlib.sha256(b"").digest()
"""The root of the tree with no leaves (RFC 9162 §2.1.1: the hash of the empty string)."""

_LEAF = b"\x00"
_NODE = b"\x01"
_sha256 = hashlib.sha256


class MerkleError(ValueError):
    """Bad input to tree building or proof generation (an index past the end, ...)."""


class ProofError(MerkleError):
    """A proof was rejected: malformed input, wrong length, or it does not verify."""


def leaf_hash(leaf: bytes) -> bytes:
    """``SHA-256(0x00 || leaf)``: the hash of one leaf's data.

    >>> leaf_hash(b"").hex()
    '6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d'
    """
    return _sha256(_LEAF + leaf).digest()


def node_hash(left: bytes, right: bytes) -> bytes:
    """``SHA-256(0x01 || left || right)``: the hash of an interior node.

    >>> node_hash(b"N123", b"N456").hex()
    'aa217fe888e47007fa15edab33c2b492a722cb106c64667fc2b044444de66bbb'
    """
    return _sha256(_NODE + left + right).digest()


def _fold_right(hashes: Sequence[bytes]) -> bytes:
    """Combine perfect subtree hashes of decreasing size into the tree hash.

    The RFC tree over ``n`` leaves is the perfect subtrees of the binary decomposition
    of ``n`` (largest first), each joined to the tree of everything right of it.
    """
    result = hashes[-1]
    for left in reversed(hashes[:-1]):
        result = _sha256(_NODE + left + result).digest()
    return result


def root_hash_of_leaf_hashes(hashes: Iterable[bytes]) -> bytes:
    """The root over already-hashed leaves, streaming: O(n) time, O(log n) memory.

    Keeps a stack of perfect subtree hashes (a "compact range"): two subtrees of equal
    size merge as soon as both exist, exactly like a binary counter.

    >>> root_hash_of_leaf_hashes([]) == EMPTY_ROOT
    True
    """
    stack: list[bytes] = []
    sizes: list[int] = []
    for h in hashes:
        if len(h) != HASH_SIZE:
            raise MerkleError(f"a leaf hash must be {HASH_SIZE} bytes, got {len(h)}")
        size = 1
        while sizes and sizes[-1] == size:
            h = _sha256(_NODE + stack.pop() + h).digest()
            size += sizes.pop()
        stack.append(h)
        sizes.append(size)
    if not stack:
        return EMPTY_ROOT
    return _fold_right(stack)


def root_hash(leaves: Iterable[bytes]) -> bytes:
    """``MTH(D_n)`` of RFC 9162 §2.1.1 over the leaves' data, streaming.

    >>> root_hash([b""]).hex()
    '6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d'
    """
    return root_hash_of_leaf_hashes(_sha256(_LEAF + leaf).digest() for leaf in leaves)


def _largest_power_of_two_below(n: int) -> int:
    """The split point ``k`` of RFC 9162: the largest power of two with ``k < n`` (n >= 2)."""
    return 1 << ((n - 1).bit_length() - 1)


def _check_size(name: str, value: object, minimum: int, error: type[MerkleError]) -> int:
    # bool is an int subclass; a True tree size is a bug in the caller, not a size.
    if not isinstance(value, int) or isinstance(value, bool):
        raise error(f"{name} must be an integer, got {type(value).__name__}")
    if value < minimum:
        raise error(f"{name} must be >= {minimum}, got {value}")
    return value


def _check_hash(name: str, value: object, error: type[MerkleError]) -> bytes:
    if not isinstance(value, bytes | bytearray | memoryview):
        raise error(f"{name} must be bytes, got {type(value).__name__}")
    value = bytes(value)
    if len(value) != HASH_SIZE:
        raise error(f"{name} must be {HASH_SIZE} bytes, got {len(value)}")
    return value


def _check_path(name: str, path: object, error: type[MerkleError]) -> list[bytes]:
    if isinstance(path, bytes | bytearray | str) or not isinstance(path, Sequence):
        raise error(f"{name} must be a sequence of {HASH_SIZE}-byte hashes")
    return [_check_hash(f"{name}[{i}]", h, error) for i, h in enumerate(path)]


def inclusion_path_size(index: int, size: int) -> int:
    """How many hashes the inclusion path of leaf ``index`` in a tree of ``size`` holds.

    The paths to ``index`` and to the last leaf ``size - 1`` share everything above the
    level where they diverge; below it every level has a sibling ("inner" part), above
    it only the levels where ``index`` is a right child do ("border" part).

    >>> [inclusion_path_size(i, 7) for i in range(7)]
    [3, 3, 3, 3, 3, 3, 2]
    """
    _check_size("tree size", size, 1, MerkleError)
    _check_size("leaf index", index, 0, MerkleError)
    if index >= size:
        raise MerkleError(f"leaf index {index} is not in a tree of size {size}")
    inner = (index ^ (size - 1)).bit_length()
    return inner + (index >> inner).bit_count()


def consistency_proof_size(old_size: int, new_size: int) -> int:
    """How many hashes the consistency proof from ``old_size`` to ``new_size`` holds.

    >>> consistency_proof_size(6, 8), consistency_proof_size(4, 8), consistency_proof_size(8, 8)
    (3, 1, 0)
    """
    _check_size("old tree size", old_size, 1, MerkleError)
    _check_size("new tree size", new_size, 1, MerkleError)
    if old_size > new_size:
        raise MerkleError(f"old tree size {old_size} is larger than new tree size {new_size}")
    if old_size == new_size:
        return 0
    # A suffix of the inclusion path of leaf old_size-1, starting at the level of the
    # largest perfect subtree ending at old_size; plus that subtree's hash unless the
    # whole old tree is that subtree (the verifier knows it: it is the old root).
    shift = (old_size & -old_size).bit_length() - 1
    length = inclusion_path_size(old_size - 1, new_size) - shift
    return length if old_size == 1 << shift else length + 1


class MerkleTree:
    """An append-only tree over leaf hashes, answering roots and proofs for any prefix.

    ``levels[h]`` is the concatenation of the hashes of all *perfect* subtrees of
    height ``h`` (``2**h`` leaves, aligned on a multiple of ``2**h``), left to right.
    Every subtree the RFC's recursive definitions visit is a run of such perfect
    subtrees, so roots and proofs for the first ``m`` leaves (any earlier checkpoint)
    come from the same levels without rehashing.
    """

    __slots__ = ("_levels",)

    def __init__(self, leaf_hashes: Iterable[bytes] = ()) -> None:
        self._levels: list[bytearray] = [bytearray()]
        self.extend(leaf_hashes)

    @classmethod
    def from_leaves(cls, leaves: Iterable[bytes]) -> MerkleTree:
        """A tree over the leaves' data (each hashed with the 0x00 prefix)."""
        return cls(_sha256(_LEAF + leaf).digest() for leaf in leaves)

    @property
    def size(self) -> int:
        """The number of leaves."""
        return len(self._levels[0]) // HASH_SIZE

    def extend(self, leaf_hashes: Iterable[bytes]) -> None:
        """Append leaf hashes; the tree of the earlier leaves is unchanged (append-only).

        Level by level, only the pairs that the new leaves complete are hashed, so
        building a tree of ``n`` leaves in any number of steps costs ``n - 1`` node
        hashes in total.
        """
        base = self._levels[0]
        old_size = len(base) // HASH_SIZE
        for h in leaf_hashes:
            if not isinstance(h, bytes | bytearray) or len(h) != HASH_SIZE:
                del base[old_size * HASH_SIZE :]
                raise MerkleError(f"a leaf hash must be {HASH_SIZE} bytes")
            base += h
        height = 0
        pair = 2 * HASH_SIZE
        while True:
            below = self._levels[height]
            count = len(below) // pair
            if count == 0:
                break
            if height + 1 == len(self._levels):
                self._levels.append(bytearray())
            above = self._levels[height + 1]
            have = len(above) // HASH_SIZE
            view = memoryview(below)
            above += b"".join(
                [
                    _sha256(_NODE + view[i : i + pair]).digest()
                    for i in range(have * pair, count * pair, pair)
                ]
            )
            view.release()
            height += 1

    def leaf_hash(self, index: int) -> bytes:
        """The hash of leaf ``index``."""
        _check_size("leaf index", index, 0, MerkleError)
        if index >= self.size:
            raise MerkleError(f"leaf index {index} is not in a tree of size {self.size}")
        return bytes(self._levels[0][index * HASH_SIZE : (index + 1) * HASH_SIZE])

    def _perfect(self, start: int, height: int) -> bytes:
        offset = (start >> height) * HASH_SIZE
        return bytes(self._levels[height][offset : offset + HASH_SIZE])

    def _range_hash(self, start: int, end: int) -> bytes:
        """``MTH(D[start:end])`` for the ranges the RFC recursion visits.

        Such a range starts on a multiple of the power of two at or above its length,
        so it is the perfect subtrees of the binary decomposition of ``end - start``.
        """
        parts: list[bytes] = []
        position = start
        remaining = end - start
        while remaining:
            height = remaining.bit_length() - 1
            parts.append(self._perfect(position, height))
            position += 1 << height
            remaining -= 1 << height
        return _fold_right(parts)

    def _resolve_size(self, size: int | None) -> int:
        if size is None:
            return self.size
        _check_size("tree size", size, 0, MerkleError)
        if size > self.size:
            raise MerkleError(f"tree size {size} is larger than the tree ({self.size} leaves)")
        return size

    def root(self, size: int | None = None) -> bytes:
        """``MTH`` of the first ``size`` leaves (default: all); O(log n)."""
        size = self._resolve_size(size)
        if size == 0:
            return EMPTY_ROOT
        return self._range_hash(0, size)

    def inclusion_path(self, index: int, size: int | None = None) -> list[bytes]:
        """``PATH(index, D[0:size])`` of RFC 6962 §2.1.1, leaf to root order.

        Follows the RFC recursion top-down, iteratively: at each split the sibling
        subtree's hash is recorded, and the recorded hashes are returned bottom-up.
        """
        size = self._resolve_size(size)
        _check_size("leaf index", index, 0, MerkleError)
        if size == 0:
            raise MerkleError("an empty tree has no inclusion proofs")
        if index >= size:
            raise MerkleError(f"leaf index {index} is not in a tree of size {size}")
        siblings: list[bytes] = []
        start, end, m = 0, size, index
        while end - start > 1:
            k = _largest_power_of_two_below(end - start)
            if m < k:
                siblings.append(self._range_hash(start + k, end))
                end = start + k
            else:
                siblings.append(self._range_hash(start, start + k))
                start, m = start + k, m - k
        siblings.reverse()
        return siblings

    def consistency_proof(self, old_size: int, new_size: int | None = None) -> list[bytes]:
        """``PROOF(old_size, D[0:new_size])`` of RFC 6962 §2.1.2 (SUBPROOF), iteratively.

        Defined for ``0 < old_size <= new_size``: a proof from the empty tree proves
        nothing, so it is refused rather than returned empty.
        """
        new_size = self._resolve_size(new_size)
        _check_size("old tree size", old_size, 1, MerkleError)
        if old_size > new_size:
            raise MerkleError(
                f"old tree size {old_size} is larger than new tree size {new_size}"
            )
        proof: list[bytes] = []
        start, end, m, complete = 0, new_size, old_size, True
        while True:
            if m == end - start:
                if not complete:
                    proof.append(self._range_hash(start, end))
                break
            k = _largest_power_of_two_below(end - start)
            if m <= k:
                proof.append(self._range_hash(start + k, end))
                end = start + k
            else:
                proof.append(self._range_hash(start, start + k))
                start, m, complete = start + k, m - k, False
        proof.reverse()
        return proof


def root_from_inclusion_path(
    leaf: bytes, index: int, size: int, path: Sequence[bytes]
) -> bytes:
    """The root that ``path`` leads to from leaf hash ``leaf`` (RFC 9162 §2.1.3.2).

    Raises :class:`ProofError` for any malformed input, including a path of the wrong
    length: the algorithm's ``sn`` checks reject a path that is too long or too short,
    and the length is also checked up front so that the message says which.
    """
    size = _check_size("tree size", size, 1, ProofError)
    index = _check_size("leaf index", index, 0, ProofError)
    if index >= size:
        raise ProofError(f"leaf index {index} is not in a tree of size {size}")
    r = _check_hash("leaf hash", leaf, ProofError)
    hashes = _check_path("inclusion path", path, ProofError)
    expected = inclusion_path_size(index, size)
    if len(hashes) != expected:
        raise ProofError(
            f"inclusion path has {len(hashes)} hashes; leaf {index} of {size} needs {expected}"
        )
    fn, sn = index, size - 1
    for p in hashes:
        if sn == 0:
            raise ProofError("inclusion path is longer than the tree is high")
        if fn & 1 or fn == sn:
            r = _sha256(_NODE + p + r).digest()
            if not fn & 1:
                while fn and not fn & 1:
                    fn >>= 1
                    sn >>= 1
        else:
            r = _sha256(_NODE + r + p).digest()
        fn >>= 1
        sn >>= 1
    if sn != 0:
        raise ProofError("inclusion path is shorter than the tree is high")
    return r


def verify_inclusion(
    leaf: bytes, index: int, size: int, path: Sequence[bytes], root: bytes
) -> None:
    """Check that leaf hash ``leaf`` is leaf ``index`` of the tree ``(size, root)``.

    ``leaf`` is the *leaf hash*: compute it with :func:`leaf_hash` from data you hold;
    never take it from the party proving inclusion (an interior node hash would then
    pass as a leaf of a smaller tree). Raises :class:`ProofError`; returns None.
    """
    expected_root = _check_hash("root hash", root, ProofError)
    if root_from_inclusion_path(leaf, index, size, path) != expected_root:
        raise ProofError("inclusion proof does not lead to the root")


def verify_consistency(
    old_size: int,
    new_size: int,
    old_root: bytes,
    new_root: bytes,
    proof: Sequence[bytes],
) -> None:
    """Check that the tree ``(new_size, new_root)`` extends ``(old_size, old_root)``.

    RFC 9162 §2.1.4.2, with ``0 < old_size <= new_size``. Equal sizes need an empty
    proof and equal roots. Raises :class:`ProofError`; returns None.
    """
    first = _check_size("old tree size", old_size, 0, ProofError)
    second = _check_size("new tree size", new_size, 0, ProofError)
    first_hash = _check_hash("old root", old_root, ProofError)
    second_hash = _check_hash("new root", new_root, ProofError)
    hashes = _check_path("consistency proof", proof, ProofError)
    if first == 0:
        raise ProofError("a consistency proof from the empty tree proves nothing")
    if first > second:
        raise ProofError(f"old tree size {first} is larger than new tree size {second}")
    if first == second:
        if hashes:
            raise ProofError("trees of equal size need an empty consistency proof")
        if first_hash != second_hash:
            raise ProofError("trees of equal size have different roots")
        return
    expected = consistency_proof_size(first, second)
    if len(hashes) != expected:
        raise ProofError(
            f"consistency proof has {len(hashes)} hashes; {first} -> {second} needs {expected}"
        )
    # Step 2: a power-of-two old tree is itself the first subtree; the proof omits it.
    if first & (first - 1) == 0:
        hashes = [first_hash, *hashes]
    fn, sn = first - 1, second - 1
    while fn & 1:
        fn >>= 1
        sn >>= 1
    fr = sr = hashes[0]
    for c in hashes[1:]:
        if sn == 0:
            raise ProofError("consistency proof is longer than the tree is high")
        if fn & 1 or fn == sn:
            fr = _sha256(_NODE + c + fr).digest()
            sr = _sha256(_NODE + c + sr).digest()
            if not fn & 1:
                while fn and not fn & 1:
                    fn >>= 1
                    sn >>= 1
        else:
            sr = _sha256(_NODE + sr + c).digest()
        fn >>= 1
        sn >>= 1
    if sn != 0:
        raise ProofError("consistency proof is shorter than the tree is high")
    if fr != first_hash:
        raise ProofError("consistency proof does not lead to the old root")
    if sr != second_hash:
        raise ProofError("consistency proof does not lead to the new root")
