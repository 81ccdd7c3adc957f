"""Delivery of each alert to the optional webhook (`TRAMITA_ALERT_WEBHOOK_URL`), off the scan's path.

The scan hands each alert it recorded to `Webhook.submit`, which only puts it on a queue: a worker thread POSTs
the alert as JSON, and on a failure (a connection error, no answer within TIMEOUT, a status other than 2xx) tries
again after a pause, up to `tries` times. The round ends in a delivery record on the alert, as an event
(`Alert.Delivered` with the tries it took, or `Alert.DeliveryFailed` with the tries and the last error), so the
record is immutable, audited and projected into the alerts table.

- Only a 2xx delivers. A redirect (3xx) is never followed: it is a failed try, recorded with its status (following
  it would send the alert, or make the scheduler send requests, wherever the receiver points).
- Each try is one exchange of at most TIMEOUT seconds, connecting to each address included, however slowly the
  receiver answers: a watchdog cuts the connection at the deadline, and the answer's body is never read (its
  status says it all).
- The pause before try n+1 is drawn uniformly from [0, min(cap, backoff x 2^(n-1))] ("full jitter"), so the
  round is bounded and receivers coming back are not hit by every scheduler at once.
- Every POST is signed per Standard Webhooks (https://www.standardwebhooks.com/): `webhook-id` (the alert's id,
  the same on every try and every round, for the receiver to de-duplicate), `webhook-timestamp` (Unix seconds of
  this try) and `webhook-signature` (`v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<body>">`) with the
  `whsec_...` secret, signed by the `standardwebhooks` package.

A failed delivery never loses the alert: the alert event is recorded before it is submitted, and at start-up,
then on the redelivery schedule while the scheduler runs (scheduler/config.py), the scheduler submits again every
alert whose last round did not deliver it (no record yet, because the process stopped first, or `failed`); an
alert queued or being delivered is not queued twice. Any error of a try is a failed try; nothing a try, a record
or the log does ends the worker.
"""

from __future__ import annotations

import http.client
import ipaddress
import json
import queue
import random
import socket
import threading
import time
from collections.abc import Callable, Mapping
from datetime import datetime, timezone
from typing import Any
from urllib.parse import urlsplit
from uuid import UUID

from standardwebhooks import Webhook as Signer

from domain.subscriptions import internal_address

#: Seconds one try may take, from connecting to the answer's status and headers, before it counts as failed.
TIMEOUT = 10.0
#: Seconds the pause before the second try may reach (doubling before each later one, up to the cap).
BACKOFF = 1.0

Post = Callable[[str, bytes, Mapping[str, str]], None]
Record = Callable[[UUID, int, "str | None"], None]


class DeliveryError(Exception):
    """The webhook did not accept the alert."""


def post_signed(url: str, body: bytes, headers: Mapping[str, str], *, timeout: float = TIMEOUT,
                public_only: bool = False) -> None:
    """POST `body` with `headers`; anything but a 2xx answer within `timeout` seconds raises DeliveryError.

    `public_only`: the host's name is resolved first, and when any of its addresses is one of the deployment's
    own network (loopback, private, link-local: `domain.subscriptions.internal_address`) nothing is sent; else the
    connection goes to the address that was judged, not to a second resolution (which a receiver's DNS could
    answer differently), with the name kept for the `Host` header and TLS."""
    started = time.monotonic()
    parts = urlsplit(url)
    try:
        host, port = parts.hostname or "", parts.port
    except ValueError as error:  # a port beyond 65535
        raise DeliveryError(f"{url[:80]!r} is not an address: {error}") from None
    if port == 0:
        raise DeliveryError(f"{url[:80]!r} is not an address: port 0")
    port = port or (443 if parts.scheme == "https" else 80)
    kind = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
    # The port is always given: left to http.client, an IPv6 literal's last group would be read as the port.
    connection = kind(host, port, timeout=timeout)
    addresses = [public_address(host, port)] if public_only else None
    # One deadline for the whole try, connecting included: over every address a name resolves to, not `timeout`
    # each (the watchdog below has no socket to cut while connecting).
    connection._create_connection = (  # type: ignore[attr-defined] # http.client's own hook for its socket
        lambda host_port, _timeout, source: connect_within(addresses or host_port, started + timeout, source))
    cut = threading.Event()

    def cut_off() -> None:  # the deadline: whatever the receiver is still (not) sending, stop waiting for it
        cut.set()
        if connection.sock is not None:
            try:
                connection.sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    watchdog = threading.Timer(max(0.0, started + timeout - time.monotonic()), cut_off)
    watchdog.daemon = True
    watchdog.start()
    timed_out = False
    try:
        connection.request("POST", (parts.path or "/") + (f"?{parts.query}" if parts.query else ""), body=body,
                           headers={"Content-Type": "application/json", "User-Agent": "tramita-scheduler",
                                    **headers})
        status = connection.getresponse().status
    except (OSError, http.client.HTTPException, UnicodeError, ValueError) as error:  # a name IDNA cannot encode
        # The socket's own timeout (`timeout` on each read or write) can run out before the watchdog's thread
        # gets its turn on a busy machine: the same missing answer, told the same way.
        timed_out = isinstance(error, TimeoutError)
        if not (timed_out or cut.is_set()):
            raise DeliveryError(f"{type(error).__name__}: {error}") from None
    finally:
        watchdog.cancel()
        connection.close()
    if timed_out or cut.is_set():  # cut off: what was read may look complete (the cut ends the headers early)
        raise DeliveryError(f"no answer within {timeout:g} s")
    if 300 <= status < 400:
        raise DeliveryError(f"HTTP {status} (redirects are not followed)")
    if not 200 <= status < 300:
        raise DeliveryError(f"HTTP {status}")


def connect_within(where: Any, deadline: float, source: Any = None, *,
                   clock: Callable[[], float] = time.monotonic) -> socket.socket:
    """A connection to the first of `where`'s addresses that answers before `deadline` (time.monotonic()):
    `where` is a (host, port) to resolve, or a list of addresses already judged (`public_address`)."""
    if isinstance(where, list):
        found = where
    elif _is_address(where[0]):  # an IP literal needs no resolver (and a host without IPv6 has none for it)
        found = [where]
    else:
        found = [address[:2] for *_, address in socket.getaddrinfo(where[0], where[1], type=socket.SOCK_STREAM)]
    failure: OSError = OSError(f"{where} does not resolve")
    for address in found:
        left = deadline - clock()
        if left <= 0:
            raise TimeoutError("no connection within the try's time")
        try:
            return socket.create_connection(address, left, source)
        except OSError as error:
            failure = error
    raise failure


def _is_address(host: str) -> bool:
    try:
        ipaddress.ip_address(host.split("%", 1)[0])
    except ValueError:
        return False
    return True


def public_address(host: str, port: int) -> tuple[Any, ...]:
    """The address to connect to for `host`, when none of those it resolves to is of the deployment's own
    network; DeliveryError otherwise (naming the address) or when it does not resolve."""
    try:
        found = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError) as error:
        raise DeliveryError(f"{host} does not resolve: {error}") from None
    for *_, address in found:
        if internal_address(ipaddress.ip_address(address[0].split("%", 1)[0])):
            raise DeliveryError(f"{host} resolves to {address[0]}, an address of the deployment's own network "
                                "(loopback, private, link-local or another range not routed on the Internet): not sent")
    if not found:
        raise DeliveryError(f"{host} does not resolve")
    return found[0][4][:2]


def full_jitter(ceiling: float) -> float:
    return random.uniform(0, ceiling)  # noqa: S311 - spreading retries, not a secret


def utc_now() -> datetime:
    return datetime.now(timezone.utc)


class Webhook:
    """A queue of alerts to deliver and the worker thread that delivers them, one at a time, in order."""

    def __init__(self, url: str, record: Record, *, tries: int, secret: str, backoff: float = BACKOFF,
                 backoff_cap: float = 60.0, post: Post = post_signed, sleep: Callable[[float], None] = time.sleep,
                 jitter: Callable[[float], float] = full_jitter, clock: Callable[[], datetime] = utc_now,
                 log: Callable[..., None] | None = None, subscription: str | None = None) -> None:
        self.url, self.record, self.tries = url, record, tries
        self.backoff, self.backoff_cap, self.jitter = backoff, backoff_cap, jitter
        self.signer, self.clock = Signer(secret), clock
        self.post, self.sleep, self.log = post, sleep, log or (lambda event, **fields: None)
        #: A subscription's webhook names it in its log lines (None: the operators' webhook).
        self.named = {"subscription_id": subscription} if subscription is not None else {}
        self._queue: queue.Queue[tuple[UUID, dict[str, Any]] | None] = queue.Queue()
        #: The alerts queued or being delivered: one submitted again meanwhile (a redelivery) is not queued twice.
        self._pending: set[UUID] = set()
        #: The alerts this worker has delivered: a redelivery that read the alerts before the delivery's record
        #: reached them does not send one again (a later process, reading the record, does not either).
        self._delivered: set[UUID] = set()
        self._lock = threading.Lock()
        self._worker = threading.Thread(target=self._work, daemon=True,
                                        name=f"tramita-webhook-{subscription}" if subscription else "tramita-webhook")
        self._worker.start()

    def submit(self, alert_id: UUID, payload: dict[str, Any]) -> bool:
        """Queue the alert for delivery and return at once; False when it is queued, being delivered or delivered
        by this worker already."""
        with self._lock:
            if alert_id in self._pending or alert_id in self._delivered:
                return False
            self._pending.add(alert_id)
        self._queue.put((alert_id, payload))
        return True

    def close(self, timeout: float | None = None) -> bool:
        """Deliver what is queued, then stop the worker; False if it was still busy after `timeout` seconds."""
        self.finish()
        return self.join(timeout)

    def finish(self) -> None:
        """Stop the worker once what is queued now has been delivered (without waiting for it)."""
        self._queue.put(None)

    def join(self, timeout: float | None = None) -> bool:
        """Wait for the worker to stop, at most `timeout` seconds; False if it is still busy."""
        self._worker.join(timeout)
        return not self._worker.is_alive()

    def _work(self) -> None:
        while (item := self._queue.get()) is not None:
            try:
                self.deliver(*item)
            except Exception as failure:  # noqa: BLE001 - the worker lives on: a redelivery delivers it again
                try:
                    self.log("delivery-unrecorded", alert_id=str(item[0]),
                             error=f"{type(failure).__name__}: {failure}", **self.named)
                except Exception:  # noqa: BLE001, S110 - a log that fails must not end the worker
                    pass
            finally:
                with self._lock:
                    self._pending.discard(item[0])

    def pause(self, attempt: int) -> float:
        """Seconds to wait after the failed try `attempt` (1, 2, ...): full jitter under the capped doubling."""
        return self.jitter(min(self.backoff_cap, self.backoff * 2 ** min(attempt - 1, 64)))

    def signed(self, alert_id: UUID, text: str) -> dict[str, str]:
        """The Standard Webhooks headers of one try: the alert's id, this try's time, the signature over both and
        the body."""
        now = self.clock().astimezone(timezone.utc)
        return {"webhook-id": str(alert_id), "webhook-timestamp": str(int(now.timestamp())),
                "webhook-signature": self.signer.sign(str(alert_id), now, text)}

    def deliver(self, alert_id: UUID, payload: dict[str, Any]) -> None:
        """One round: up to `tries` signed POSTs with a jittered, capped pause between them, then its record."""
        text = json.dumps(payload, ensure_ascii=False)
        body = text.encode("utf-8")
        error = None
        for attempt in range(1, self.tries + 1):
            try:
                self.post(self.url, body, self.signed(alert_id, text))
            except Exception as failure:  # noqa: BLE001 - whatever went wrong with the try, it failed: try again
                error = str(failure) if isinstance(failure, DeliveryError) else f"{type(failure).__name__}: {failure}"
                if attempt < self.tries:
                    self.sleep(self.pause(attempt))
                continue
            with self._lock:
                self._delivered.add(alert_id)
            self._record(alert_id, attempt, None)
            self.log("delivered", alert_id=str(alert_id), tries=attempt, **self.named)
            return
        self._record(alert_id, self.tries, error)
        self.log("delivery-failed", alert_id=str(alert_id), tries=self.tries, last_error=error, **self.named)

    def _record(self, alert_id: UUID, tries: int, error: str | None) -> None:
        try:
            self.record(alert_id, tries, error)
        except Exception as failure:  # noqa: BLE001 - unrecorded: the next start delivers it again
            self.log("delivery-unrecorded", alert_id=str(alert_id), tries=tries,
                     error=f"{type(failure).__name__}: {failure}", **self.named)
