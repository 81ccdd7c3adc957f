"""The scheduler: its own process (`tramita scheduler`) that raises compliance alerts on statutory deadlines.

- `config`: the settings, from the environment with command-line overrides, refused by name when malformed;
- `scan`: one scan: the deadlines due soon or missed, read from the projections, judged and recorded as alert
  events by the application (each at most once);
- `pending`: what is left to deliver, read from the alert events (never from the alerts tables, their views);
- `subscribers`: each subscription's own webhook;
- `leader`: exactly one scheduler acts at a time (a PostgreSQL advisory lock, or a lock file beside SQLite);
- `webhook`: delivery of each alert to an optional webhook, in a worker thread, with its record as events;
- `jsonlog`: one JSON object per line on stdout;
- `service`: the wiring: leadership, the start-up catch-up scan, APScheduler's cron trigger, clean shutdown.
"""
