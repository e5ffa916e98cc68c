"""Many engines (§16): the registry, the Selector (one engine) and the Federation (all of them).

>>> selector = Selector.load("rcp.json")
>>> client = await selector.select_capable("retrieve")
>>> async with Federation.load("rcp.json") as federation:
...     result = await federation.retrieve("query", k=5)
"""

from rcpkit.federation.connect import Connector, connect_engine
from rcpkit.federation.engines import EngineState
from rcpkit.federation.federation import Federation
from rcpkit.federation.fusion import (
    DEDUP_KEYS,
    FUSION_STRATEGIES,
    RRF_K_DEFAULT,
    EngineHits,
    Fused,
    FusionConfig,
    fuse_hits,
)
from rcpkit.federation.hops import DEFAULT_DEPTH, FEDERATION_PATH_ENV, Hop
from rcpkit.federation.registry import (
    EngineSpec,
    Registry,
    RegistryError,
    load_registry,
    parse_registry,
)
from rcpkit.federation.results import EngineFailure, FederatedResult
from rcpkit.federation.selector import NoLiveEngine, Selector, UnknownEngine

__all__ = [
    "DEDUP_KEYS",
    "DEFAULT_DEPTH",
    "FEDERATION_PATH_ENV",
    "FUSION_STRATEGIES",
    "RRF_K_DEFAULT",
    "Connector",
    "EngineFailure",
    "EngineHits",
    "EngineSpec",
    "EngineState",
    "FederatedResult",
    "Federation",
    "Fused",
    "FusionConfig",
    "Hop",
    "NoLiveEngine",
    "Registry",
    "RegistryError",
    "Selector",
    "UnknownEngine",
    "connect_engine",
    "fuse_hits",
    "load_registry",
    "parse_registry",
]
