"""The RCP client: async, with a blocking facade over the same code.

>>> client = await Client.connect_stdio(["rcpkit", "serve", "--engine", "keyword", "--sample"])
>>> result = await client.retrieve("reciprocal rank fusion", k=3)
>>> async with client.stream_retrieve("bm25", k=3) as call:
...     async for event in call:
...         print(event)
...     result = await call.result()
>>> await client.close()
"""

from rcpkit.client.channel import Channel, Outgoing, Receiver
from rcpkit.client.client import MAX_PROTOCOL_VERSION, MIN_PROTOCOL_VERSION, Client
from rcpkit.client.connection import Connection
from rcpkit.client.errors import (
    CapabilityMissing,
    DeadlineExceeded,
    MalformedResult,
    OptionUnsupported,
    TransportClosed,
    VersionUnsupported,
)
from rcpkit.client.http import HttpChannel, HttpEndpoint
from rcpkit.client.memory import MemoryChannel, connect_in_memory
from rcpkit.client.options import CallOptions
from rcpkit.client.retry import NO_RETRY, RetryPolicy
from rcpkit.client.stdio import StdioChannel, StdioEndpoint
from rcpkit.client.streaming import Event, StreamingCall
from rcpkit.client.streams import StreamChannel
from rcpkit.client.sync import SyncClient, SyncStreamingCall
from rcpkit.client.wire import Endpoint

__all__ = [
    "MAX_PROTOCOL_VERSION",
    "MIN_PROTOCOL_VERSION",
    "NO_RETRY",
    "CallOptions",
    "CapabilityMissing",
    "Channel",
    "Client",
    "Connection",
    "DeadlineExceeded",
    "Endpoint",
    "Event",
    "HttpChannel",
    "HttpEndpoint",
    "MalformedResult",
    "MemoryChannel",
    "OptionUnsupported",
    "Outgoing",
    "Receiver",
    "RetryPolicy",
    "StdioChannel",
    "StdioEndpoint",
    "StreamChannel",
    "StreamingCall",
    "SyncClient",
    "SyncStreamingCall",
    "TransportClosed",
    "VersionUnsupported",
    "connect_in_memory",
]
