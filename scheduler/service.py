"""The scheduler process: leadership, a catch-up scan at start, then APScheduler's cron trigger until stopped.

`run` is what `tramita scheduler` calls once the command line is parsed and the application built:

1. wait for the leadership (`leader`); a stop while waiting ends the process without acting;
2. read every alert event (scheduler/pending.py) and hand the webhook every alert no round has delivered to it,
   and each subscription's webhook each of its alerts no round has delivered there: what is left to deliver is
   decided from the alert events, never from the `alerts` and `alert_deliveries` tables, which are only their
   views (an edited or deleted row silences nothing);
3. scan at once (each scan also logs, and hands the webhook, the system alerts the alert events show undelivered
   that this process has not handed over yet: they are raised by other components, such as the projector)
   (the catch-up scan: a scheduler that was down for a week raises, for every deadline that fell due or was missed
   meanwhile, the alert it calls for now);
4. sign a checkpoint of the audit log (when a signing key is configured), handing every checkpoint a witness
   lacks to it; a log that contradicts a checkpoint signed before is refused: the `tamper-alarm` line, and exit
   status 1 with `once` (a resident scheduler keeps raising deadline alerts and refuses again at each run);
5. with `once`, wait for the webhook's queue and return; otherwise hand the scan, the checkpoint and the
   redelivery of the alerts whose round failed (every REDELIVERY cron run, while the scheduler runs) to a
   `BlockingScheduler` with `CronTrigger`s read from their crontab lines, `coalesce=True` (runs missed while a
   job overran or the machine slept collapse into one), `misfire_grace_time=None` (a late run still runs) and
   `max_instances=1`;
6. when `stop` is set (SIGTERM, Ctrl-C) the scheduler shuts down after the scan in progress, the webhook's
   queue is drained, and the lock is released.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from audit.log import TamperAlarm, TreeDamaged
from audit.service import Audit
from domain.alerts import Alert
from domain.application import LEGAL_TIMEZONE, Tramita
from projections.cache import cache_bytes
from projections.projector import Projector
from infrastructure.store import Store
from scheduler.config import SchedulerConfig
from scheduler.documents import DocumentExpiry
from scheduler.jsonlog import Log, Wording, alert_fields
from scheduler.leader import Leadership, LeadershipLostError, acquire
from scheduler.pending import AlertEvents
from scheduler.scan import SCHEDULER, ScanResult, readable_alert, scan
from scheduler.subscribers import Subscribers
from infrastructure.webhook import Webhook

#: Seconds the webhook's queue may take to drain at shutdown before the process exits anyway.
DRAIN_SECONDS = 120.0


@dataclass
class Scanner:
    """One leader's scans: each alert raised is logged and handed to the webhook."""

    app: Tramita
    store: Store
    projector: Projector
    thresholds: tuple[int, ...]
    log: Log
    webhook: Webhook | None = None
    leadership: Leadership | None = None
    handed: set[str] = field(default_factory=set)
    """System alerts this process has logged or handed to the webhook."""
    subscribers: Subscribers | None = None
    """The subscriptions' webhooks (None: no subscription key, so no subscription can be served)."""
    wording: Wording = field(default_factory=Wording)
    """How the alerts' codes are said beside them in the log and the bodies (the e-mails' catalogue)."""
    turn: threading.Lock = field(default_factory=threading.Lock)
    """One job at a time: the scan and the redelivery (each on APScheduler's pool) share the projector, the alert
    events read and the subscriptions' workers, and at :30 both crons fire."""
    events: AlertEvents = field(init=False)
    """The alert events read so far: what is left to deliver."""

    def __post_init__(self) -> None:
        self.events = AlertEvents(self.app, self.log)

    def scan(self) -> ScanResult:
        with self.turn:
            return self._scan()

    def _scan(self) -> ScanResult:
        if self.leadership is not None:
            self.leadership.check()
        result = scan(self.app, self.store, thresholds=self.thresholds, projector=self.projector,
                      recorded=self.events)
        for case_id, error in result.unreadable:
            self.log("case-unreadable", case_id=case_id, error=error)
        system = self._system_alerts()
        if self.subscribers is not None:
            self.subscribers.refresh()
        for alert in [*result.raised, *system]:
            fields = alert_fields(alert, self.wording)
            if self.subscribers is not None:
                self.subscribers.submit(alert, fields)
            if self.webhook is not None:
                self.webhook.submit(alert.id, fields)
            self.log("alert", **fields)  # after it is queued: nothing the log does can keep it from its receivers
        self.log("scan", today=result.today, deadlines=result.deadlines, cases=result.cases,
                 raised=len(result.raised), system_alerts=len(system), unreadable=len(result.unreadable))
        return result

    def _system_alerts(self) -> list[Alert]:
        """The system alerts the alert events show undelivered to the operators' webhook (read again after the
        scan, whose projector may have raised some) not yet handed over by this process: without a webhook they
        have no delivery record, so each process logs them once."""
        self.events.catch_up()
        new = [alert_id for alert_id in map(str, self.events.undelivered(system=True)) if alert_id not in self.handed]
        self.handed.update(new)
        return [alert for alert_id in new if (alert := readable_alert(self.app, alert_id, self.log)) is not None]

    def redeliver(self) -> int:
        """Hand the webhook every alert whose last delivery round did not deliver it, and each subscription's
        webhook each of its alerts not delivered to it, as the alert events tell (not the tables); return how
        many."""
        with self.turn:
            return self._redeliver()

    def _redeliver(self) -> int:
        if self.webhook is None and self.subscribers is None:
            return 0
        self.events.catch_up()
        queued = 0
        if self.subscribers is not None:
            self.subscribers.refresh()
            queued = self.subscribers.redeliver(self.events)
        if self.webhook is None:
            return queued
        alerts = [alert for alert_id in self.events.undelivered()
                  if (alert := readable_alert(self.app, alert_id, self.log)) is not None]
        for alert in alerts:
            queued += self.webhook.submit(alert.id, alert_fields(alert, self.wording))
            if alert.case_id is None:
                self.handed.add(str(alert.id))
        return queued

    def redeliver_now(self) -> int:
        """A redelivery on the schedule: each alert a round did not deliver (failed, or no record of a round) is
        queued again, unless it is queued already; logged when there are any."""
        if self.leadership is not None:
            self.leadership.check()
        queued = self.redeliver()
        if queued:
            self.log("redelivering", alerts=queued)
        return queued


@dataclass
class Checkpointer:
    """One leader's checkpoints of the audit log: each signed one logged, each refusal a tamper alarm."""

    audit: Audit
    log: Log
    leadership: Leadership | None = None
    alarms: int = 0

    def sign(self) -> bool:
        """Sign a checkpoint now (or find the tree unchanged); False when the log refused (a tamper alarm)."""
        if self.leadership is not None:
            self.leadership.check()
        try:
            logged: int | None = self.audit.log.size
        except TreeDamaged:  # the signing below refuses with the tamper alarm, which names the damage
            logged = None
        self.log("checkpoint-signing", logged=logged)
        try:
            signed = self.audit.sign_checkpoint(self.log)
        except TamperAlarm as alarm:
            self.alarms += 1
            self.log("tamper-alarm", findings=alarm.findings)
            return False
        checkpoint = signed.checkpoint
        self.log("checkpoint", size=checkpoint.size, root=checkpoint.root, new=signed.new,
                 signed_at=checkpoint.signed_at, legal_date=checkpoint.legal_date)
        return True


def webhook_for(config: SchedulerConfig, app: Tramita, log: Log, **options: object) -> Webhook | None:
    if not config.webhook_url:
        return None
    return Webhook(config.webhook_url, lambda alert_id, tries, error: app.record_alert_delivery(
        alert_id, SCHEDULER, tries=tries, error=error), tries=config.webhook_tries, secret=config.webhook_secret,
        backoff_cap=config.webhook_backoff_cap, log=log, **options)


def run(config: SchedulerConfig, app: Tramita, store: Store, leadership: Leadership, *, stop: threading.Event,
        log: Log, once: bool = False, webhook_options: dict | None = None, audit: Audit | None = None,
        wording: Wording | None = None) -> int:
    """Lead, scan (and sign a checkpoint) at start, then on the cron schedules until `stop` (or once); the process's
    exit code. Without `audit`, or when it has no signing key, no checkpoint is signed. `wording` says the alerts'
    codes in words beside them (default: the e-mails' catalogue, the municipalities by the registry's names)."""
    if not acquire(leadership, stop, poll=config.poll_leadership, log=log):
        log("stopped", pid=os.getpid(), reason="stopped while waiting for the leadership")
        return 0
    webhook = webhook_for(config, app, log, **(webhook_options or {}))
    wording = wording or Wording.of(app, config.mail.gettext, config.mail.number)
    subscribers = None
    if app.subscription_keys is not None:
        subscribers = Subscribers(app, store, log, config.webhook_tries, config.webhook_backoff_cap,
                                  dict(webhook_options or {}), private_urls=config.subscription_private_urls,
                                  mail=config.mail, wording=wording)
    elif unserved := len(app.delivered_subscriptions()):
        log("subscriptions-off", subscriptions=unserved,
            reason="no subscription key (TRAMITA_SUBSCRIPTION_KEY): no subscription is served")
    projector = Projector(app, store, cache_bytes=cache_bytes(os.environ))  # its catch-up before each scan
    scanner = Scanner(app, store, projector, config.thresholds, log, webhook, leadership, subscribers=subscribers,
                      wording=wording)
    checkpointer = Checkpointer(audit, log, leadership) if audit is not None and audit.signer is not None else None
    if audit is not None and checkpointer is None:
        log("checkpoints-off", reason="no signing key (TRAMITA_SIGNING_KEY): the audit log is not signed")
    try:
        redelivered = scanner.redeliver()
        if redelivered:
            log("redelivering", alerts=redelivered)
        scanner.scan()
        signed = checkpointer.sign() if checkpointer is not None else True
        if not once:
            return _on_schedule(config, scanner, checkpointer, stop, log)
        return 0 if signed else 1
    except LeadershipLostError as lost:
        log("leadership-lost", pid=os.getpid(), error=str(lost))
        return 1
    finally:
        _drain(webhook, subscribers, log)
        leadership.release()


def _drain(webhook: Webhook | None, subscribers: Subscribers | None, log: Log) -> None:
    """Let every queue deliver what it holds, all at once, within DRAIN_SECONDS in all."""
    deadline = time.monotonic() + DRAIN_SECONDS
    if webhook is not None:
        webhook.finish()
    busy = subscribers.close(DRAIN_SECONDS) if subscribers is not None else []
    if webhook is not None and not webhook.join(max(0.0, deadline - time.monotonic())):
        log("webhook-not-drained", seconds=DRAIN_SECONDS)
    if busy:
        log("webhook-not-drained", seconds=DRAIN_SECONDS, subscriptions=busy)


def _on_schedule(config: SchedulerConfig, scanner: Scanner, checkpointer: Checkpointer | None,
                 stop: threading.Event, log: Log) -> int:
    from datetime import datetime

    from apscheduler.events import EVENT_SCHEDULER_STARTED
    from apscheduler.schedulers.blocking import BlockingScheduler
    from apscheduler.triggers.cron import CronTrigger

    from scheduler.read_models import check_read_models

    lost: list[str] = []
    scheduler = BlockingScheduler(timezone=LEGAL_TIMEZONE)

    def guarded(run: Callable[[], object], failure: str) -> Callable[[], None]:
        def job() -> None:
            try:
                run()
            except LeadershipLostError as error:
                lost.append(str(error))
                stop.set()
            except Exception as error:  # the next run tries again; the log says why this one failed
                log(failure, error=f"{type(error).__name__}: {error}")

        return job

    def stop_when_told(_: object) -> None:  # once started: shut down after the scan in progress when told
        threading.Thread(target=lambda: (stop.wait(), scheduler.shutdown(wait=True)),
                         name="tramita-scheduler-stop", daemon=True).start()

    scheduler.add_job(guarded(scanner.scan, "scan-failed"),
                      CronTrigger.from_crontab(config.cron, timezone=LEGAL_TIMEZONE),
                      id="scan", coalesce=True, misfire_grace_time=None, max_instances=1)
    if checkpointer is not None:
        scheduler.add_job(guarded(checkpointer.sign, "checkpoint-failed"),
                          CronTrigger.from_crontab(config.checkpoint_cron, timezone=LEGAL_TIMEZONE), id="checkpoint",
                          coalesce=True, misfire_grace_time=None, max_instances=1)
    if scanner.webhook is not None or scanner.subscribers is not None:
        scheduler.add_job(guarded(scanner.redeliver_now, "redelivery-failed"),
                          CronTrigger.from_crontab(config.redelivery_cron, timezone=LEGAL_TIMEZONE), id="redeliver",
                          coalesce=True, misfire_grace_time=None, max_instances=1)
    scheduler.add_job(guarded(DocumentExpiry(scanner, config.database_url, config.document_expiry_days).run,
                              "document-expiry-failed"),
                      CronTrigger.from_crontab(config.document_expiry_cron, timezone=LEGAL_TIMEZONE),
                      id="document-expiry", coalesce=True, misfire_grace_time=None, max_instances=1)
    scheduler.add_job(guarded(lambda: check_read_models(scanner.app, config.database_url, log),
                              "read-model-check-failed"),
                      CronTrigger.from_crontab(config.read_model_check_cron, timezone=LEGAL_TIMEZONE),
                      id="read-model-check", coalesce=True, misfire_grace_time=None, max_instances=1,
                      next_run_time=datetime.now(LEGAL_TIMEZONE))  # and once at the start
    scheduler.add_listener(stop_when_told, EVENT_SCHEDULER_STARTED)
    if not stop.is_set():
        scheduler.start()
    if lost:
        log("leadership-lost", pid=os.getpid(), error=lost[0])
        return 1
    log("stopped", pid=os.getpid(), reason="asked to stop")
    return 0
