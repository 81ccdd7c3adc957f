"""Delivery of each alert to the optional webhook (`TRAMITA_ALERT_WEBHOOK_URL`), off the scan's path.

The scan hands each alert it recorded to `Webhook.submit`, which only puts it on a queue: a worker thread POSTs
the alert as JSON, and on a failure (a connection error, a timeout, a status other than 2xx) tries again after
`backoff`, twice that, four times that..., up to `tries` times. The round ends in a delivery record on the alert,
as an event (`Alert.Delivered` with the tries it took, or `Alert.DeliveryFailed` with the tries and the last
error), so the record is immutable, audited and projected into the alerts table.

A failed delivery never loses the alert: the alert event is recorded before it is submitted, and at start-up
the scheduler submits again every alert whose last round did not deliver it (no record yet, because the process
stopped first, or `failed`): a webhook that was down is caught up on the next start, one round per start.
"""

from __future__ import annotations

import json
import queue
import threading
import time
import urllib.request
from collections.abc import Callable
from typing import Any
from uuid import UUID

#: Seconds a POST may take before it counts as a failed try.
TIMEOUT = 10.0
#: Seconds before the second try (doubled before each later one).
BACKOFF = 1.0

Post = Callable[[str, bytes], None]
Record = Callable[[UUID, int, "str | None"], None]


class DeliveryError(Exception):
    """The webhook did not accept the alert."""


def post_json(url: str, body: bytes) -> None:
    """POST `body` as application/json; anything but a 2xx answer raises."""
    request = urllib.request.Request(url, data=body, method="POST",
                                     headers={"Content-Type": "application/json", "User-Agent": "tramita-scheduler"})
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT) as response:  # noqa: S310 - the configured URL
            if not 200 <= response.status < 300:
                raise DeliveryError(f"HTTP {response.status}")
    except OSError as error:  # URLError, HTTPError (4xx, 5xx), timeouts and refused connections
        code = getattr(error, "code", None)
        raise DeliveryError(f"HTTP {code}" if code else f"{type(error).__name__}: {error}") from None


class Webhook:
    """A queue of alerts to deliver and the worker thread that delivers them, one at a time, in order."""

    def __init__(self, url: str, record: Record, *, tries: int, backoff: float = BACKOFF,
                 post: Post = post_json, sleep: Callable[[float], None] = time.sleep,
                 log: Callable[..., None] | None = None) -> None:
        self.url, self.record, self.tries, self.backoff = url, record, tries, backoff
        self.post, self.sleep, self.log = post, sleep, log or (lambda event, **fields: None)
        self._queue: queue.Queue[tuple[UUID, dict[str, Any]] | None] = queue.Queue()
        self._worker = threading.Thread(target=self._work, name="tramita-webhook", daemon=True)
        self._worker.start()

    def submit(self, alert_id: UUID, payload: dict[str, Any]) -> None:
        """Queue the alert for delivery and return at once."""
        self._queue.put((alert_id, payload))

    def close(self, timeout: float | None = None) -> bool:
        """Deliver what is queued, then stop the worker; False if it was still busy after `timeout` seconds."""
        self._queue.put(None)
        self._worker.join(timeout)
        return not self._worker.is_alive()

    def _work(self) -> None:
        while (item := self._queue.get()) is not None:
            self.deliver(*item)

    def deliver(self, alert_id: UUID, payload: dict[str, Any]) -> None:
        """One round: up to `tries` POSTs with a doubling pause between them, then its record."""
        body = json.dumps(payload, ensure_ascii=False).encode("utf-8")
        error = None
        for attempt in range(1, self.tries + 1):
            try:
                self.post(self.url, body)
            except DeliveryError as failure:
                error = str(failure)
                if attempt < self.tries:
                    self.sleep(self.backoff * 2 ** (attempt - 1))
                continue
            self._record(alert_id, attempt, None)
            self.log("delivered", alert_id=str(alert_id), tries=attempt)
            return
        self._record(alert_id, self.tries, error)
        self.log("delivery-failed", alert_id=str(alert_id), tries=self.tries, last_error=error)

    def _record(self, alert_id: UUID, tries: int, error: str | None) -> None:
        try:
            self.record(alert_id, tries, error)
        except Exception as failure:  # noqa: BLE001 - unrecorded: the next start delivers it again
            self.log("delivery-unrecorded", alert_id=str(alert_id), tries=tries,
                     error=f"{type(failure).__name__}: {failure}")
