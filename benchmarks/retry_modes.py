"""botocore's standard vs adaptive retry mode under throttling, on a simulated server (no I/O).

``python -m benchmarks.retry_modes CAPACITY THREADS SECONDS MODE...`` — a ``before-send`` hook plays a
table that admits CAPACITY requests/s (token bucket, a tenth of a second of burst) and answers the rest
with ``ProvisionedThroughputExceededException``; THREADS threads share one client (the runtime's
``client_config`` for MODE) and put items as fast as they can for SECONDS. Prints, per mode, the
successful rate, the throttled responses, the calls that failed after retries and the latency
percentiles. The evidence for docs/adr/0034-standard-retry-mode-for-table-clients.md.
"""

from __future__ import annotations

import json
import sys
import threading
import time
from typing import Any

from constructs_lib.runtime import _aws

_HEADERS = {"Content-Type": "application/x-amz-json-1.0"}
_OK = b"{}"
_THROTTLED = json.dumps({"__type": "com.amazonaws.dynamodb.v20120810#ProvisionedThroughputExceededException",
                         "message": "throttled"}).encode()


class _Raw:
    def __init__(self, body: bytes) -> None:
        self._body = body

    def stream(self, **_: Any) -> Any:
        yield self._body


class Server:
    """Admits ``capacity`` requests/s; counts admitted and throttled requests."""

    def __init__(self, capacity: float) -> None:
        self.capacity, self.burst = capacity, capacity / 10
        self.tokens, self.last, self.lock = self.burst, time.monotonic(), threading.Lock()
        self.ok = self.throttled = 0

    def send(self, request: Any, **_: Any) -> Any:
        from botocore.awsrequest import AWSResponse

        with self.lock:
            now = time.monotonic()
            self.tokens = min(self.burst, self.tokens + (now - self.last) * self.capacity)
            self.last = now
            admitted = self.tokens >= 1
            if admitted:
                self.tokens -= 1
                self.ok += 1
            else:
                self.throttled += 1
        return AWSResponse(request.url, 200 if admitted else 400, dict(_HEADERS), _Raw(_OK if admitted else _THROTTLED))


def run(capacity: float, threads: int, seconds: float, mode: str) -> str:
    import boto3

    client = boto3.session.Session().client(
        "dynamodb", region_name="us-east-1", endpoint_url="http://127.0.0.1:1", aws_access_key_id="x",
        aws_secret_access_key="y", config=_aws.client_config(retry_mode=mode))
    server = Server(capacity)
    client.meta.events.register_first("before-send.dynamodb", server.send)
    latencies: list[float] = []
    failed = [0]
    stop = time.monotonic() + seconds

    def worker() -> None:
        while time.monotonic() < stop:
            start = time.monotonic()
            try:
                client.put_item(TableName="t", Item={"PK": {"S": "a"}})
            except Exception:  # noqa: BLE001 - counted: a call that failed after its retries
                failed[0] += 1
            latencies.append(time.monotonic() - start)

    pool = [threading.Thread(target=worker) for _ in range(threads)]
    began = time.monotonic()
    for t in pool:
        t.start()
    for t in pool:
        t.join()
    elapsed = time.monotonic() - began
    latencies.sort()

    def pct(q: float) -> float:
        return latencies[min(len(latencies) - 1, int(len(latencies) * q))] * 1e3

    sent = server.ok + server.throttled
    return (f"{mode:9} capacity {capacity:.0f}/s, {threads} thread(s): {server.ok / elapsed:.0f} ok/s "
            f"({server.ok / elapsed / capacity:.0%} of capacity), {server.throttled} throttled responses "
            f"({server.throttled / max(1, sent):.0%} of requests), {failed[0]} failed calls, "
            f"p50 {pct(0.5):.0f} ms, p99 {pct(0.99):.0f} ms, max {latencies[-1] * 1e3:.0f} ms")


if __name__ == "__main__":
    capacity, threads, seconds = float(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
    for mode in sys.argv[4:] or ["standard", "adaptive"]:
        print(run(capacity, threads, seconds, mode), flush=True)
