"""RCP/1 wire types, error codes and the method registry."""

from rcpkit.protocol.base import Wire
from rcpkit.protocol.capabilities import *  # noqa: F403
from rcpkit.protocol.capabilities import __all__ as _capabilities
from rcpkit.protocol.content import *  # noqa: F403
from rcpkit.protocol.content import __all__ as _content
from rcpkit.protocol.errors import ErrorCode, RCPError, is_retryable
from rcpkit.protocol.messages import *  # noqa: F403
from rcpkit.protocol.messages import __all__ as _messages
from rcpkit.protocol.methods import METHODS, NOTIFICATIONS, MethodSpec

__all__ = [
    "METHODS",
    "NOTIFICATIONS",
    "ErrorCode",
    "MethodSpec",
    "RCPError",
    "Wire",
    "is_retryable",
    *_capabilities,
    *_content,
    *_messages,
]
