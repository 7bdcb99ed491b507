"""A compiled validator for ingest's hot path, generated from the pydantic contract.

Why: :func:`.models.validate_event` (pydantic) costs several microseconds per event,
which alone keeps ingest far from the speed of merely parsing JSON. msgspec validates a
decoded event in C in a fraction of that. The pydantic models stay the one contract:
this module does not restate it, it *compiles* it. At import it walks each event
model's pydantic-core schema (the exact validator pydantic runs) and builds a mirroring
msgspec ``Struct`` per ``(type, v)``: strict types, unknown fields forbidden, the same
length, range, pattern and literal constraints, aliases as field names.

The compiled validator is only ever allowed to be *stricter* than the contract, never
looser, so a ``True`` from :func:`fast_valid` means :func:`validate_event` accepts the
event too; a ``False`` means "rejected or unsure", and the caller asks
:func:`validate_event` for the verdict and its precise reason. Where the translation
cannot be exact it errs strict:

* regex patterns are anchored at the very end (``\\Z``: pydantic's Rust regex ``$``
  does not match before a trailing newline, Python's does), and only patterns in a
  plain syntax (literals, classes, groups, counts, alternation) are translated;
* a union msgspec cannot express whole (two list types) keeps only the choices it can,
  so the rest fall back;
* an after-validator is translated only if this module knows an equally strict
  constraint for it (:data:`_REFINEMENTS`); any other construct (an unknown validator,
  a model validator, a tagged union, ...) marks that ``(type, v)`` unsupported, and
  such events always take the pydantic path. Nothing is silently dropped.

The envelope rule that :func:`validate_event` checks outside the models (system events
have actor ``system``, player events do not) is mirrored in :func:`fast_valid`.
``tests/test_fastpath.py`` holds both paths to the same verdict (golden and bad
fixtures, mutations, generated events).
"""

from __future__ import annotations

import itertools
import re
import re._parser as sre_parse  # the stdlib's regex parser, to enumerate finite patterns
from collections.abc import Callable
from typing import Annotated, Any, Literal, Union

import msgspec
import pyarrow as pa
import pyarrow.compute as pc

from .models import (
    EVENT_MODELS,
    SYSTEM_ACTOR,
    SYSTEM_TYPE_NAMES,
    _check_index_keys,
    _check_ts,
)

__all__ = ["COLUMN_CHECKS", "FAST_TYPES", "UNSUPPORTED", "failing_rows", "fast_valid",
           "fast_valid_struct"]


class _Unsupported(Exception):
    """A schema construct with no equally strict msgspec form."""


#: Patterns we translate: literals, classes, groups, counts, alternation, anchors. No
#: ``\\d``/``\\w``/``.``/flags, whose meaning may differ between Rust and Python regex.
_PLAIN_PATTERN = re.compile(r"[A-Za-z0-9_\[\]()?*+:|{},\-^$]*")

# A real calendar date, as ``datetime.fromisoformat`` accepts it: year 0001-9999,
# 29 Feb only in leap years (divisible by 4, centuries only by 400). No look-arounds,
# so that the same text is a valid RE2 pattern (the per-batch check below).
_YEAR = r"(?:000[1-9]|00[1-9][0-9]|0[1-9][0-9]{2}|[1-9][0-9]{3})"
_LEAP_YEAR = r"(?:[0-9]{2}(?:0[48]|[2468][048]|[13579][26])|(?:0[48]|[2468][048]|[13579][26])00)"
_DATE = (
    _YEAR + r"-(?:(?:0[1-9]|1[0-2])-(?:0[1-9]|1[0-9]|2[0-8])"
    r"|(?:0[13-9]|1[0-2])-(?:29|30)|(?:0[13578]|1[02])-31)"
    r"|" + _LEAP_YEAR + r"-02-29"
)
#: What ``_check_ts`` accepts, written as one pattern (stricter: ASCII digits only).
TS_PATTERN = (
    r"^(?:" + _DATE + r")T(?:[01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9]\.[0-9]{3}Z$"
)


def _refine_ts(schema: dict[str, Any]) -> dict[str, Any]:
    if schema.get("type") != "str" or "pattern" in schema:
        raise _Unsupported("_check_ts on something other than a plain str")
    return {**schema, "pattern": TS_PATTERN, "_trusted_pattern": True}


def _refine_index_keys(schema: dict[str, Any]) -> dict[str, Any]:
    inner = schema.get("schema", {}) if schema.get("type") == "nullable" else schema
    if inner.get("type") != "dict" or inner.get("keys_schema", {}).get("type") != "str":
        raise _Unsupported("_check_index_keys on something other than a dict of str keys")
    keys = {**inner["keys_schema"], "pattern": r"^(?:0|[1-9][0-9]*)$"}
    refined = {**inner, "keys_schema": keys}
    return {**schema, "schema": refined} if inner is not schema else refined


#: After-validators of :mod:`.models` with a constraint at least as strict.
_REFINEMENTS: dict[Callable[..., Any], Callable[[dict[str, Any]], dict[str, Any]]] = {
    _check_ts: _refine_ts,
    _check_index_keys: _refine_index_keys,
}

_STR_KEYS = {"type", "metadata", "ref", "strict", "min_length", "max_length", "pattern",
             "_trusted_pattern"}
_INT_KEYS = {"type", "metadata", "ref", "strict", "ge", "le", "gt", "lt"}
_SEQ_KEYS = {"type", "metadata", "ref", "strict", "items_schema", "min_length", "max_length"}
_DICT_KEYS = {"type", "metadata", "ref", "strict", "keys_schema", "values_schema",
              "min_length", "max_length"}


def _meta(schema: dict[str, Any], names: tuple[str, ...]) -> dict[str, Any]:
    return {k: schema[k] for k in names if schema.get(k) is not None}


def _only(schema: dict[str, Any], allowed: set[str]) -> None:
    extra = set(schema) - allowed
    if extra:
        raise _Unsupported(f"{schema.get('type')} with {sorted(extra)}")


def _pattern(schema: dict[str, Any]) -> str:
    pattern = schema["pattern"]
    if not schema.get("_trusted_pattern") and not _PLAIN_PATTERN.fullmatch(pattern):
        raise _Unsupported(f"pattern {pattern!r} outside the plain syntax")
    # Rust's `$` is end of text; Python's also matches before a final newline.
    return f"(?:{pattern})\\Z"


_MAX_ENUMERATED = 4096


def _strings(items: list[tuple[Any, Any]]) -> list[str] | None:
    """Every string a parsed regex sequence matches, or None if too many / not plain."""
    out = [""]
    for op, arg in items:
        if op is sre_parse.LITERAL:
            alts = [chr(arg)]
        elif op is sre_parse.IN:
            alts = []
            for sub_op, sub_arg in arg:
                if sub_op is sre_parse.LITERAL:
                    alts.append(chr(sub_arg))
                elif sub_op is sre_parse.RANGE:
                    alts.extend(chr(c) for c in range(sub_arg[0], sub_arg[1] + 1))
                else:
                    return None  # negation, categories: not enumerated
        elif op is sre_parse.BRANCH:
            alts = []
            for branch in arg[1]:
                sub = _strings(list(branch))
                if sub is None:
                    return None
                alts.extend(sub)
        elif op is sre_parse.SUBPATTERN:
            alts = _strings(list(arg[3]))
        elif op is sre_parse.MAX_REPEAT or op is sre_parse.MIN_REPEAT:
            low, high, sub_items = arg
            one = _strings(list(sub_items))
            if one is None or high is sre_parse.MAXREPEAT or len(one) ** high > _MAX_ENUMERATED:
                return None
            alts = ["".join(p) for n in range(low, high + 1)
                    for p in itertools.product(one, repeat=n)]
        else:
            return None
        if alts is None or len(out) * len(alts) > _MAX_ENUMERATED:
            return None
        out = [a + b for a in out for b in alts]
    return out


def finite_language(pattern: str) -> tuple[str, ...] | None:
    """The exact set of strings a pattern anchored at both ends (``^...$``) accepts,
    if it is small; None otherwise. Why: msgspec checks a ``Literal`` with one hash
    look-up but a pattern with a call into Python's ``re`` (~20x slower), and card
    codes are 53 strings."""
    if not _PLAIN_PATTERN.fullmatch(pattern):
        return None
    items = list(sre_parse.parse(pattern))
    if (len(items) < 2 or items[0] != (sre_parse.AT, sre_parse.AT_BEGINNING)
            or items[-1] != (sre_parse.AT, sre_parse.AT_END)):
        return None
    found = _strings(items[1:-1])
    return tuple(sorted(set(found))) if found else None


class _Compiler:
    """Core schema -> msgspec type, per event model (definitions shared within one)."""

    def __init__(self, name: str, *, defer: bool) -> None:
        self.name = name
        self.defer = defer
        self.depth = 0
        #: top-level field alias -> the regex left out of the Struct, checked per batch
        self.deferred: dict[str, str] = {}
        self.defs: dict[str, dict[str, Any]] = {}
        self.done: dict[str, Any] = {}
        self.busy: set[str] = set()

    def _split_pattern(self, schema: dict[str, Any]) -> tuple[dict[str, Any], str | None]:
        """A top-level field's schema without its regex (if it has one that cannot be a
        Literal), and that regex."""
        kind = schema["type"]
        if kind in ("default", "nullable"):
            inner, pattern = self._split_pattern(schema["schema"])
            return {**schema, "schema": inner}, pattern
        if kind == "function-after":
            refine = _REFINEMENTS.get(schema["function"].get("function"))
            if refine is None or schema["function"].get("type") != "no-info":
                return schema, None  # compile() says why it is unsupported
            return self._split_pattern(refine(schema["schema"]))
        if (kind == "str" and schema.get("pattern") is not None
                and finite_language(schema["pattern"]) is None):
            _pattern(schema)  # the same syntax rule as an in-Struct pattern
            rest = {k: v for k, v in schema.items() if k not in ("pattern", "_trusted_pattern")}
            return rest, schema["pattern"]
        return schema, None

    def compile(self, schema: dict[str, Any]) -> Any:
        kind = schema["type"]
        if kind == "definitions":
            for d in schema["definitions"]:
                self.defs[d["ref"]] = d
            return self.compile(schema["schema"])
        if kind == "definition-ref":
            ref = schema["schema_ref"]
            if ref in self.done:
                return self.done[ref]
            if ref in self.busy or ref not in self.defs:
                raise _Unsupported(f"recursive or unknown reference {ref}")
            self.busy.add(ref)
            self.done[ref] = out = self.compile(self.defs[ref])
            return out
        if kind == "model":
            return self._model(schema)
        if kind == "str":
            _only(schema, _STR_KEYS)
            meta = _meta(schema, ("min_length", "max_length"))
            if schema.get("pattern") is not None:
                words = finite_language(schema["pattern"])
                if words is not None:
                    low, high = meta.get("min_length", 0), meta.get("max_length", 1 << 62)
                    words = tuple(w for w in words if low <= len(w) <= high)
                    if not words:
                        raise _Unsupported("a pattern that accepts nothing")
                    return Literal[words]  # type: ignore[valid-type]
                meta["pattern"] = _pattern(schema)
            return Annotated[str, msgspec.Meta(**meta)] if meta else str
        if kind == "int":
            _only(schema, _INT_KEYS)
            meta = _meta(schema, ("ge", "le", "gt", "lt"))
            return Annotated[int, msgspec.Meta(**meta)] if meta else int
        if kind == "bool":
            _only(schema, {"type", "metadata", "ref", "strict"})
            return bool
        if kind == "any":
            return Any
        if kind == "literal":
            expected = schema["expected"]
            if not expected or not all(type(x) in (str, int) for x in expected):
                raise _Unsupported(f"literal of {expected!r}")
            return Literal[tuple(expected)]  # type: ignore[valid-type]
        if kind == "nullable":
            return Union[self.compile(schema["schema"]), None]  # noqa: UP007 - runtime-built
        if kind == "list":
            _only(schema, _SEQ_KEYS)
            items = self.compile(schema["items_schema"]) if "items_schema" in schema else Any
            meta = _meta(schema, ("min_length", "max_length"))
            return Annotated[list[items], msgspec.Meta(**meta)] if meta else list[items]  # type: ignore[valid-type]
        if kind == "dict":
            _only(schema, _DICT_KEYS)
            keys = self.compile(schema.get("keys_schema", {"type": "str"}))
            values = self.compile(schema.get("values_schema", {"type": "any"}))
            meta = _meta(schema, ("min_length", "max_length"))
            typ = dict[keys, values]  # type: ignore[valid-type]
            return Annotated[typ, msgspec.Meta(**meta)] if meta else typ
        if kind == "union":
            return self._union(schema)
        if kind == "function-after":
            refine = _REFINEMENTS.get(schema["function"].get("function"))
            if refine is None or schema["function"].get("type") != "no-info":
                raise _Unsupported(f"after-validator {schema['function']!r}")
            return self.compile(refine(schema["schema"]))
        raise _Unsupported(f"schema node {kind!r}")

    def _union(self, schema: dict[str, Any]) -> Any:
        if schema.get("mode", "smart") not in ("smart", "left_to_right"):
            raise _Unsupported("union mode")
        kept: list[Any] = []
        for choice in schema["choices"]:
            typ = self.compile(choice[0] if isinstance(choice, tuple) else choice)
            try:  # msgspec refuses some unions (two list types): keep what it takes
                msgspec.json.Decoder(Union[(*kept, typ)])
            except TypeError:
                continue
            kept.append(typ)
        if not kept:
            raise _Unsupported("no union choice expressible")
        return Union[tuple(kept)]  # noqa: UP007

    def _model(self, schema: dict[str, Any]) -> type[msgspec.Struct]:
        config = schema.get("config", {})
        body = schema["schema"]
        if (config.get("extra_fields_behavior") != "forbid" or body.get("type") != "model-fields"
                or schema.get("post_init") or schema.get("custom_init")
                or body.get("computed_fields") or body.get("extras_schema")
                or body.get("model_validators")):
            raise _Unsupported(f"model {schema['cls'].__name__} is not a closed plain model")
        top = self.depth == 0
        self.depth += 1
        fields: list[tuple[Any, ...]] = []
        for name, spec in body["fields"].items():
            if spec.get("type") != "model-field":
                raise _Unsupported(f"field {name} of type {spec.get('type')}")
            alias = spec.get("validation_alias", name)
            if not isinstance(alias, str):
                raise _Unsupported(f"field {name}: alias choices")
            inner = spec["schema"]
            if top and self.defer:
                inner, pattern = self._split_pattern(inner)
                if pattern is not None:
                    self.deferred[alias] = pattern
            if inner["type"] == "default":
                if "default" not in inner:
                    raise _Unsupported(f"field {name}: default factory")
                # The default is only needed so a missing key is allowed; its value is
                # never used (the fast path validates, the dict is what is stored).
                fields.append((name, self.compile(inner["schema"]),
                               msgspec.field(default=None, name=alias)))
            else:
                fields.append((name, self.compile(inner), msgspec.field(name=alias)))
        self.depth -= 1
        return msgspec.defstruct(
            f"Fast{schema['cls'].__name__}", fields, kw_only=True, forbid_unknown_fields=True,
            frozen=True,
        )


def _compile(model: Any, *, defer: bool) -> tuple[Any, dict[str, str]]:
    compiler = _Compiler(model.__name__, defer=defer)
    return compiler.compile(model.__pydantic_core_schema__), compiler.deferred


def _build() -> tuple[dict[tuple[str, int], type[msgspec.Struct]], dict[str, str],
                      dict[tuple[str, int], str]]:
    """Compile every event model. Envelope regexes (``ts``, ``prev_hash``, ``hash``)
    are left out of the Structs when every type shares them, to be checked once per
    batch by :func:`failing_rows` (RE2 over a column) instead of once per event by a
    call into Python's ``re``."""
    types: dict[tuple[str, int], Any] = {}
    deferred: dict[tuple[str, int], dict[str, str]] = {}
    unsupported: dict[tuple[str, int], str] = {}
    for key, model in EVENT_MODELS.items():
        try:
            types[key], deferred[key] = _compile(model, defer=True)
        except _Unsupported as exc:
            unsupported[key] = str(exc)
    shared = next(iter(deferred.values()), {})
    for key, checks in deferred.items():
        if checks != shared:  # this type's regexes stay inside its Struct
            types[key], _ = _compile(EVENT_MODELS[key], defer=False)
    return types, shared, unsupported


#: ``(type, v)`` -> the compiled Struct; ``UNSUPPORTED`` names what could not be compiled
#: (those events always go through pydantic); ``COLUMN_CHECKS`` maps a top-level field
#: to the regex its value must match (absent or null: nothing to check), checked outside
#: the Struct.
FAST_TYPES, COLUMN_CHECKS, UNSUPPORTED = _build()
_PY_CHECKS = tuple((alias, re.compile(f"(?:{p})\\Z").search)
                   for alias, p in COLUMN_CHECKS.items())
#: The same regexes for RE2 (Arrow); ``$`` is end of text there as in Rust.
RE2_CHECKS = {alias: f"(?:{p})\\z" for alias, p in COLUMN_CHECKS.items()}
_SYSTEM = SYSTEM_ACTOR
_SYSTEM_TYPES = SYSTEM_TYPE_NAMES
_convert = msgspec.convert
_Invalid = msgspec.ValidationError


def fast_valid_struct(obj: Any) -> bool:
    """:func:`fast_valid` less :data:`COLUMN_CHECKS`: the caller must run
    :func:`failing_rows` on the batch before it trusts a True."""
    if type(obj) is not dict:
        return False
    type_name = obj.get("type")
    version = obj.get("v")
    if type(type_name) is not str or type(version) is not int:
        return False
    struct = FAST_TYPES.get((type_name, version))
    if struct is None:
        return False
    try:
        _convert(obj, struct)
    except _Invalid:
        return False
    return (type_name in _SYSTEM_TYPES) == (obj["actor"] == _SYSTEM)


def fast_valid(obj: Any) -> bool:
    """True only if :func:`validate_event` certainly accepts ``obj`` (a decoded JSON
    value); False when it rejects it or this path is unsure. Never a false True."""
    if not fast_valid_struct(obj):
        return False
    for alias, search in _PY_CHECKS:
        value = obj.get(alias)
        if value is not None and search(value) is None:
            return False
    return True


def failing_rows(columns: dict[str, pa.Array]) -> list[int]:
    """Positions (in the given columns, all of one length) whose value fails its
    :data:`COLUMN_CHECKS` regex; null means absent and passes. ``columns`` must hold
    every field of :data:`COLUMN_CHECKS`."""
    bad: set[int] = set()
    for alias, pattern in RE2_CHECKS.items():
        ok = pc.match_substring_regex(columns[alias], pattern=pattern)
        bad.update(pc.indices_nonzero(pc.invert(pc.fill_null(ok, True))).to_pylist())
    return sorted(bad)
