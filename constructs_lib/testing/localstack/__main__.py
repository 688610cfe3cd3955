"""``python -m constructs_lib.testing.localstack install|start|stop|env`` (see the package docstring).

``start`` installs what is missing, starts LocalStack in the background on ``--port`` (4566) and
prints the environment a shell needs (``env`` prints it again); ``stop`` ends it. Exit status 2
with the reason on stderr when a prerequisite is missing or LocalStack does not start.
"""

from __future__ import annotations

import argparse
import shlex
import sys
from collections.abc import Sequence

from constructs_lib.testing.exceptions import LocalStackError
from constructs_lib.testing.localstack.install import DEFAULT_RUNTIMES, install
from constructs_lib.testing.localstack.server import DEFAULT_PORT, client_environment, running, start


def _exports(port: int) -> str:
    return "\n".join(f"export {k}={shlex.quote(v)}" for k, v in client_environment(port).items())


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m constructs_lib.testing.localstack", description=__doc__)
    parser.add_argument("command", choices=["install", "start", "stop", "env"])
    parser.add_argument("--port", type=int, default=DEFAULT_PORT, help="gateway port on 127.0.0.1 (default 4566)")
    parser.add_argument("--runtime", action="append", dest="runtimes", metavar="RUNTIME",
                        help="a Lambda runtime to run locally (repeatable; default python3.13)")
    args = parser.parse_args(argv)
    runtimes = tuple(args.runtimes or DEFAULT_RUNTIMES)
    try:
        if args.command == "install":
            done = install(runtimes)
            print(f"LocalStack: {done.python}; runtimes: {', '.join(f'{k}={v}' for k, v in done.runtimes.items())}")
        elif args.command == "start":
            server = start(install(runtimes), port=args.port)
            print(f"# LocalStack ready on {server.endpoint} in {server.started_in:.1f} s (pid {server.pid}, "
                  f"log {server.log}); stop it with: python -m constructs_lib.testing.localstack stop", file=sys.stderr)
            print(_exports(args.port))
        elif args.command == "stop":
            running(args.port).stop()
        else:
            print(_exports(args.port))
    except LocalStackError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
