"""A seeded generator of hostile RCP frames for the fuzz campaign (``rcpkit bench fuzz``).

Every method of the registry, every params field of its params type (read from
``METHODS``, not listed here) set to wrong types, deep nesting, Unicode edge
cases, huge strings, broken envelopes, byte-level mutations, batches and
cancel storms. Each :class:`Sent` says what the server owes it: the ids that
must be answered exactly once, and whether other answers (id null, or ids a
mutation invented) are allowed.
"""

from __future__ import annotations

import copy
import itertools
import json
import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from msgspec import inspect

from rcpkit.protocol.methods import METHODS

__all__ = ["FrameGenerator", "Sent"]


@dataclass(slots=True)
class Sent:
    """One or more lines written together, and what the server owes them."""

    lines: list[bytes]
    # Ids that must get exactly one answer each (§13.1).
    exact: list[Any] = field(default_factory=list)
    # Ids that may be answered at most once (a mutation may or may not keep them).
    maybe: list[Any] = field(default_factory=list)
    # Answers with id null this may draw: parse errors, bad envelopes.
    loose: int = 0
    kind: str = ""


# The lifecycle method that ends the session is sent once, at the end, by the runner.
_SKIPPED = {"shutdown"}

_TEMPLATES: dict[str, dict[str, Any]] = {
    "initialize": {"protocolVersion": 1},
    "info": {},
    "ping": {"nonce": "n"},
    "embed": {"inputs": ["rank fusion", "bm25"]},
    "embed/sparse": {"inputs": ["rank fusion"]},
    "embed/multi": {"inputs": ["rank fusion"]},
    "rerank": {"query": "rank fusion", "passages": ["reciprocal rank fusion", "bm25"]},
    "retrieve": {"query": "reciprocal rank fusion", "k": 3},
    "query/transform": {"query": "how does rank fusion work", "method": "rewrite"},
    "graph": {"op": "local", "query": "rank fusion"},
    "index/add": {"documents": [{"text": "a fuzzed document about rank fusion"}]},
    "index/delete": {"ids": ["fuzz-missing"]},
    "catalog/list": {},
    "feedback": {"signals": [{"hitId": "bm25", "used": True}]},
    "memory/build": {"documents": [{"text": "a memory about fusion"}]},
    "memory/recall": {"query": "fusion"},
}

_RETRIEVE_OPTIONS: list[dict[str, Any]] = [
    {"mode": "dense"},
    {"mode": "sparse"},
    {"mode": "hybrid", "fusion": {"method": "rrf", "rrfK": 60}},
    {"fusion": {"method": "convex", "alpha": 0.3}},
    {"rerank": {"method": "colbert", "topN": 5}, "candidateK": 20},
    {"rerank": False},
    {"mmr": {"lambda": 0.5}},
    {"filter": {"field": "ext", "op": "eq", "value": "md"}},
    {"filter": {"and": [{"field": "year", "op": "gte", "value": 2000}]}},
    {"minScore": 0.0, "includeVectors": True, "encoding": "f32-base64"},
    {"unit": "document", "tokenBudget": 50},
    {"sessionId": "fuzz-session", "seed": 7},
    {"rewrite": "multi-query"},
    {"recency": {"field": "mtime", "halfLifeDays": 30}},
    {"strict": False, "mode": "hybrid", "unit": "community"},
    {"candidateK": 2, "k": 10},
    {"cursor": "not-a-cursor"},
    {"indexVersion": "0"},
]

_UNICODE = [
    "\u0000",
    "\ud800",  # a lone surrogate: not encodable as UTF-8
    "\udfff\ud800",
    "\uffff\ufffe",
    "\U0010ffff",
    "\u202e\u2066rtl\u2069",
    "e\u0301\u0301\u0301\u0301",
    "\U0001f469\u200d\U0001f469\u200d\U0001f467",
    "\u2028\u2029",
    "\ufeffbom",
    "\x7f\x1b[31m",
    "Ω≈ç√∫˜µ≤≥÷",
    "ﾟ･✿ヾ╲(｡◕‿◕｡)╱✿･ﾟ",
    "𝕋𝕙𝕖 𝕢𝕦𝕚𝕔𝕜",
    "٠١٢٣٤٥٦٧٨٩",
    "\\u0000",
    "\"'\\/<script>",
    "' OR 1=1; --",
    "%s%n%x",
]

_SCALARS: list[Any] = [
    None,
    True,
    False,
    0,
    -1,
    1,
    2**31,
    2**53,
    2**53 + 1,
    2**63,
    -(2**63) - 1,
    10**30,
    1.5,
    -0.0,
    1e308,
    5e-324,
    "",
    "x",
    "1",
    "true",
    "null",
    [],
    {},
    [None],
    {"": None},
    [[], {}],
]


def _field_names(method: str) -> list[str]:
    spec = METHODS[method]
    info = inspect.type_info(spec.params)
    assert isinstance(info, inspect.StructType)
    return [f.encode_name for f in info.fields]


def _has_surrogate(value: Any) -> bool:
    """Whether a lone surrogate (not valid in UTF-8, so not in JSON text) is in ``value``."""
    try:
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def _nested_text(depth: int) -> str:
    opening = "".join('{"a":' if level % 2 else "[" for level in range(depth))
    closing = "".join("}" if level % 2 else "]" for level in reversed(range(depth)))
    return opening + "0" + closing


class FrameGenerator:
    """Deterministic for a seed: the same campaign replays exactly."""

    def __init__(self, seed: int, *, huge_bytes: int = 1 << 20) -> None:
        self.rng = random.Random(seed)
        self._ids = itertools.count(1)
        self._huge = huge_bytes
        self.methods = [name for name in METHODS if name not in _SKIPPED]
        self.fields = {name: _field_names(name) for name in self.methods}
        self._kinds: list[tuple[Callable[[], Sent], int]] = [
            (self._valid, 10),
            (self._wrong_field, 34),
            (self._unicode, 8),
            (self._envelope, 10),
            (self._bytes, 10),
            (self._batch, 8),
            (self._cancel_storm, 4),
            (self._deep, 3),
            (self._huge_string, 1),
            (self._notification, 7),
            (self._unknown_method, 5),
        ]
        self._weights = list(itertools.accumulate(weight for _, weight in self._kinds))

    def frames(self) -> Iterator[Sent]:
        while True:
            yield self.next()

    def next(self) -> Sent:
        (make,) = self.rng.choices([m for m, _ in self._kinds], cum_weights=self._weights)
        return make()

    # --- building blocks ---

    def new_id(self) -> Any:
        number = next(self._ids)
        # §4.7: ids are strings or numbers; the server echoes type and value.
        choice = number % 4
        if choice == 0:
            return f"f-{number}"
        if choice == 1:
            return number
        if choice == 2:
            return number + 0.5
        return f"f-{number}-" + self.rng.choice(["é", "😀", "\u202e", " ", ""])

    def _params(self, method: str) -> dict[str, Any]:
        params: dict[str, Any] = copy.deepcopy(_TEMPLATES.get(method, {}))
        if method == "retrieve" and self.rng.random() < 0.7:
            params.update(copy.deepcopy(self.rng.choice(_RETRIEVE_OPTIONS)))
        if method == "index/add" and self.rng.random() < 0.5:
            params["documents"][0]["id"] = f"fz-{self.rng.randrange(50)}"
            params["_meta"] = {"idempotencyKey": f"k-{self.rng.randrange(1000)}"}
        if self.rng.random() < 0.2:
            params["_meta"] = {
                **params.get("_meta", {}),
                "progressToken": self.rng.choice([1, "t", "é"]),
            }
        return params

    def _junk(self) -> Any:
        roll = self.rng.random()
        if roll < 0.6:
            return copy.deepcopy(self.rng.choice(_SCALARS))
        if roll < 0.8:
            return self.rng.choice(_UNICODE) * self.rng.choice([1, 3, 100])
        if roll < 0.9:
            return [self._junk() for _ in range(self.rng.randrange(4))]
        return {self.rng.choice(["type", "text", "uri", "op", "field"]): self._junk()}

    def _request(self, method: str, params: Any, id: Any = None) -> dict[str, Any]:
        return {
            "jsonrpc": "2.0",
            "id": self.new_id() if id is None else id,
            "method": method,
            "params": params,
        }

    def _one(self, message: dict[str, Any], kind: str) -> Sent:
        line = json.dumps(message, ensure_ascii=self.rng.random() < 0.3).encode(
            "utf-8", "surrogatepass"
        )
        if _has_surrogate(message):
            # A lone surrogate (raw, or as a \\ud800 escape): a parse error, id null.
            return Sent([line], maybe=[message["id"]], loose=1, kind=kind)
        return Sent([line], exact=[message["id"]], kind=kind)

    # --- frame kinds ---

    def _valid(self) -> Sent:
        method = self.rng.choice(self.methods)
        return self._one(self._request(method, self._params(method)), "valid")

    def _wrong_field(self) -> Sent:
        method = self.rng.choice(self.methods)
        params = self._params(method)
        names = self.fields[method] or ["x"]
        for _ in range(self.rng.choice([1, 1, 2, 3])):
            target = params
            name = self.rng.choice(names)
            nested = [v for v in params.values() if isinstance(v, dict)]
            if nested and self.rng.random() < 0.3:
                target = self.rng.choice(nested)
                name = self.rng.choice([*target.keys(), "topN", "method", "field", "op"])
            target[name] = self._junk()
        return self._one(self._request(method, params), "wrong-type")

    def _unicode(self) -> Sent:
        method = self.rng.choice(["retrieve", "embed", "rerank", "index/add", "ping", "feedback"])
        params = self._params(method)
        text = "".join(self.rng.choices(_UNICODE, k=self.rng.randrange(1, 6)))
        for key in ("query", "nonce", "sessionId"):
            if key in params:
                params[key] = text
        if "inputs" in params:
            params["inputs"] = [text, {"type": "text", "text": text}]
        if "documents" in params:
            params["documents"] = [{"text": text, "id": text[:40], "meta": {text: text}}]
        return self._one(self._request(method, params), "unicode")

    def _envelope(self) -> Sent:
        id = self.new_id()
        method = self.rng.choice(self.methods)
        message: Any = self._request(method, self._params(method), id)
        mutation = self.rng.randrange(9)
        if mutation == 0:
            message["jsonrpc"] = self.rng.choice(["1.0", 2.0, None, "2.0 "])
        elif mutation == 1:
            message["id"] = self.rng.choice([None, True, [1], {"a": 1}])
        elif mutation == 2:
            message["method"] = self.rng.choice([1, None, ["ping"], {"m": 1}, ""])
        elif mutation == 3:
            message["params"] = self.rng.choice([[1, 2], "p", 3, True])
        elif mutation == 4:
            del message["jsonrpc"]
        elif mutation == 5:
            message = self.rng.choice([[], "x", 1, None, [1, 2]])
        elif mutation == 6:
            message["result"] = {}  # a response-shaped request
        elif mutation == 7:
            message["params"] = None  # null params: treated as absent
            return self._one(message, "envelope")
        else:
            message["extra"] = self._junk()  # unknown members are ignored
            return self._one(message, "envelope")
        return Sent([self._encode_loose(message)], maybe=[id], loose=1, kind="envelope")

    def _encode_loose(self, message: Any) -> bytes:
        return json.dumps(message).encode("utf-8", "surrogatepass")

    def _bytes(self) -> Sent:
        method = self.rng.choice(self.methods)
        message = self._request(method, self._params(method))
        line = bytearray(self._encode_loose(message))
        mutation = self.rng.randrange(6)
        if mutation == 0 and len(line) > 2:
            del line[self.rng.randrange(1, len(line)) :]
        elif mutation == 1:
            for _ in range(self.rng.randrange(1, 4)):
                line[self.rng.randrange(len(line))] = self.rng.randrange(256)
        elif mutation == 2:
            line[self.rng.randrange(len(line)) : 0] = self.rng.choice(
                [b"\xff", b"\xc0\x80", b"\x00", b"\xef\xbb\xbf", b"\xed\xa0\x80", b"\r"]
            )
        elif mutation == 3:
            line = bytearray(b"\xef\xbb\xbf") + line
        elif mutation == 4:
            return Sent([b"", b"   ", b"\t"], kind="bytes")  # blank lines: ignored
        else:
            line = bytearray(line.replace(b'"jsonrpc"', b"'jsonrpc'"))
        line = line.replace(b"\n", b" ")
        if _id_changed(bytes(line), message["id"]):
            # A flipped byte that turns this frame's id into another frame's would be
            # answered once per frame sent with it, which the ledger cannot tell from a
            # request answered twice: cut the frame short instead (never parses).
            line = line[: len(line) // 2]
        return Sent([bytes(line)], maybe=[message["id"]], loose=1, kind="bytes")

    def _batch(self) -> Sent:
        members: list[Any] = []
        exact: list[Any] = []
        loose = 0
        size = self.rng.choice([1, 2, 3, 8, 32, 200])
        for _ in range(size):
            roll = self.rng.random()
            if roll < 0.6:
                method = self.rng.choice(self.methods)
                params = self._params(method)
                if self.rng.random() < 0.5:
                    params[self.rng.choice(self.fields[method] or ["x"])] = self._junk()
                message = self._request(method, params)
                members.append(message)
                exact.append(message["id"])
            elif roll < 0.8:
                members.append(
                    {
                        "jsonrpc": "2.0",
                        "method": "notifications/progress",
                        "params": {"progressToken": 1},
                    }
                )
            else:
                members.append(self.rng.choice([1, "x", None, [], {"jsonrpc": "2.0"}]))
                loose += 1
        if not exact and not loose:
            return Sent([json.dumps(members).encode()], kind="batch")
        if self.rng.random() < 0.02:
            return Sent([b"[]"], loose=1, kind="batch")
        line = self._encode_loose(members)
        if _has_surrogate(members):  # a junk lone surrogate: the whole batch is -32700
            return Sent([line], maybe=exact, loose=1, kind="batch")
        return Sent([line], exact=exact, loose=loose + 1, kind="batch")

    def _cancel_storm(self) -> Sent:
        lines, exact = [], []
        for _ in range(self.rng.choice([2, 8, 32])):
            method = self.rng.choice(["retrieve", "rerank", "embed", "graph", "index/add"])
            message = self._request(method, self._params(method))
            lines.append(self._encode_loose(message))
            exact.append(message["id"])
        targets = [*exact, *(self.new_id() for _ in range(4)), None, True, [1]]
        self.rng.shuffle(targets)
        for target in targets:
            cancel = {"jsonrpc": "2.0", "method": "notifications/cancel", "params": {"id": target}}
            lines.insert(self.rng.randrange(len(lines) + 1), json.dumps(cancel).encode())
        return Sent(lines, exact=exact, kind="cancel-storm")

    def _deep(self) -> Sent:
        depth = self.rng.choice([65, 200, 500, 990, 3000, 20000])
        method = self.rng.choice(self.methods)
        id = self.new_id()
        params = self._params(method)
        key = self.rng.choice([*params.keys(), "_meta", "x"])
        params[key] = "@DEEP@"
        text = json.dumps(self._request(method, params, id)).replace(
            '"@DEEP@"', _nested_text(depth)
        )
        # Deeper than the decoder holds: one -32013 with id null instead of an answer.
        if depth < 900:
            return Sent([text.encode()], exact=[id], kind="deep")
        return Sent([text.encode()], maybe=[id], loose=1, kind="deep")

    def _huge_string(self) -> Sent:
        method = self.rng.choice(["retrieve", "ping", "embed", "feedback", "index/add"])
        params = self._params(method)
        huge = self.rng.choice(["a", "é", "😀 "]) * (self._huge // 4)
        key = self.rng.choice([*params.keys(), "sessionId", "cursor", "nonce"])
        params[key] = huge if self.rng.random() < 0.5 else [huge]
        return self._one(self._request(method, params), "huge")

    def _notification(self) -> Sent:
        method = self.rng.choice(
            [
                "notifications/progress",
                "notifications/cancel",
                "notifications/log",
                "notifications/x-unknown",
                *self.methods,
            ]
        )
        params = self.rng.choice([self._junk(), {"id": self._junk()}, {}])
        return Sent(
            [self._encode_loose({"jsonrpc": "2.0", "method": method, "params": params})],
            kind="notification",
        )

    def _unknown_method(self) -> Sent:
        method = self.rng.choice(
            [
                "retrieve/v2",
                "x-acme/thing",
                "x-",
                "",
                "RETRIEVE",
                "notifications/cancel",
                "rpc.discover",
                "index",
                "/",
                "shutdown/now",
                "é",
            ]
        )
        return self._one(self._request(method, self._junk()), "unknown-method")


def _id_changed(line: bytes, id: Any) -> bool:
    """Whether ``line`` still parses as a request whose id is no longer ``id``."""
    try:
        decoded = json.loads(line.decode("utf-8", "surrogatepass").lstrip("\ufeff"))
    except (ValueError, RecursionError):
        return False
    if not isinstance(decoded, dict) or "id" not in decoded:
        return False
    same = type(decoded["id"]) is type(id) and decoded["id"] == id
    return not same
