"""Solr's HTTP API as the store and the local cluster use it: JSON in, JSON out, failover.

Every node of a SolrCloud answers for every collection (it forwards what it does
not host), so a request that cannot reach one node is sent to the next one
known; only when none answers is Solr unavailable (:class:`SolrUnavailable`).
Solr's own refusals (a 4xx/5xx with its message) are :class:`SolrError`.
"""

from __future__ import annotations

import json
import threading
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Sequence
from typing import Any

__all__ = ["SolrError", "SolrHttp", "SolrUnavailable"]

_TIMEOUT = 60.0


class SolrError(Exception):
    """Solr answered with an error: its HTTP status and message."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(f"Solr {status}: {message}")
        self.status = status
        self.message = message


class SolrUnavailable(Exception):
    """No node of the cluster could be reached."""


class SolrHttp:
    """Requests to a SolrCloud through any of its nodes (base URLs ``http://h:p/solr``)."""

    def __init__(self, bases: Sequence[str], timeout: float = _TIMEOUT) -> None:
        if not bases:
            raise ValueError("at least one Solr node URL")
        self._bases = list(dict.fromkeys(base.rstrip("/") for base in bases))
        self._preferred = 0
        self._lock = threading.Lock()
        self.timeout = timeout

    @property
    def bases(self) -> list[str]:
        return list(self._bases)

    def learn(self, bases: Sequence[str]) -> None:
        """Add nodes found in the cluster's state (failover targets)."""
        with self._lock:
            for base in bases:
                if base.rstrip("/") not in self._bases:
                    self._bases.append(base.rstrip("/"))

    def get(self, path: str, **params: Any) -> dict[str, Any]:
        query = urllib.parse.urlencode({**params, "wt": "json"}, doseq=True)
        return self._send(f"{path}?{query}", None, None)

    def post_json(self, path: str, body: Any, **params: Any) -> dict[str, Any]:
        query = urllib.parse.urlencode({**params, "wt": "json"}, doseq=True)
        data = json.dumps(body, ensure_ascii=False).encode()
        return self._send(f"{path}?{query}", data, "application/json")

    def post_bytes(self, path: str, data: bytes, content_type: str) -> dict[str, Any]:
        return self._send(path, data, content_type)

    def admin(self, action: str, **params: Any) -> dict[str, Any]:
        """A Collections API call (``/admin/collections?action=…``)."""
        return self.get("/admin/collections", action=action, **params)

    def _send(self, path: str, data: bytes | None, content_type: str | None) -> dict[str, Any]:
        with self._lock:
            order = self._bases[self._preferred :] + self._bases[: self._preferred]
        failures = []
        for base in order:
            method = "GET" if data is None else "POST"
            request = urllib.request.Request(base + path, data=data, method=method)
            if content_type is not None:
                request.add_header("Content-Type", content_type)
            try:
                with urllib.request.urlopen(request, timeout=self.timeout) as response:
                    answer: dict[str, Any] = json.load(response)
            except urllib.error.HTTPError as error:
                status, message = error.code, _message(error)
                if status in (502, 503, 504) or _node_down(message):
                    failures.append(f"{base}: {status} {message}")
                    continue  # a node still starting or shutting down: the next one
                raise SolrError(status, message) from error
            except (urllib.error.URLError, OSError) as error:
                failures.append(f"{base}: {getattr(error, 'reason', error)}")
                continue
            with self._lock:
                self._preferred = self._bases.index(base)
            return answer
        raise SolrUnavailable("no Solr node answered: " + "; ".join(failures))


def _message(error: urllib.error.HTTPError) -> str:
    try:
        body = json.loads(error.read() or b"{}")
    except (ValueError, OSError):
        return str(error.reason)
    found = body.get("error", {}) if isinstance(body, dict) else {}
    return str(found.get("msg") or error.reason)


def _node_down(message: str) -> bool:
    # What a node answers while its cores or the cluster state are not ready yet.
    return "no servers hosting shard" in message.lower() or "is shutting down" in message.lower()
