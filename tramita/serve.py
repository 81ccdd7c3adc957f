"""Serving: `tramita serve` runs gunicorn's stock threaded workers (`gthread`) over `tramita.web:create_app()`,
through gunicorn's documented Custom Application and settings only: no worker of our own, nothing of a release.

In production nginx stands in front (docs/nginx.conf): it reads every request whole, head and body, within its own
timeouts and limits, so slow, idle and oversized requests never hold a gunicorn thread (docs/operations.md,
"Serving: the server we chose"). `tramita up` and `make run` serve on 127.0.0.1 without it.

Each worker builds its own application after the fork (no preloading: no database connection crosses a fork).
Settings, lowest precedence first: DEFAULTS, a configuration file (`tramita serve -c FILE`, else
TRAMITA_GUNICORN_CONFIG, else a `-c FILE` in GUNICORN_CMD_ARGS), GUNICORN_CMD_ARGS, then `--bind`/`--workers`.
"""

from __future__ import annotations

import runpy
from typing import Any

from gunicorn.app.base import BaseApplication

#: tramita's gunicorn settings (a configuration file, GUNICORN_CMD_ARGS and the command line override them).
#: Request and header lines as long as nginx passes (docs/nginx.conf: 8 KiB), so that nginx refuses longer ones
#: first, as problem+json; more than 100 header fields gunicorn still refuses itself.
DEFAULTS: dict[str, Any] = {
    "bind": "127.0.0.1:8000", "workers": 2, "worker_class": "gthread", "threads": 4, "keepalive": 5,
    "timeout": 30, "limit_request_line": 8190, "limit_request_fields": 100, "limit_request_field_size": 16384,
    "accesslog": "-", "proc_name": "tramita-api", "preload_app": False,
}
#: Set only where the installed gunicorn knows them: its control socket (27+) is one path per user, which two
#: servers (tests, a bench) would share.
OPTIONAL: dict[str, Any] = {"control_socket_disable": True}


class Gunicorn(BaseApplication):
    """gunicorn over tramita's app factory, configured as the module says (not from sys.argv)."""

    def __init__(self, overrides: dict[str, Any] | None = None, config_file: str | None = None) -> None:
        self.overrides, self.config_file = overrides or {}, config_file
        super().__init__()

    def load_config(self) -> None:
        for key, value in DEFAULTS.items():
            self.cfg.set(key, value)
        for key, value in OPTIONAL.items():
            if key in self.cfg.settings:
                self.cfg.set(key, value)
        from_env = self.cfg.parser().parse_args(self.cfg.get_cmd_args_from_env())
        config_file = self.config_file or from_env.config
        if config_file:
            self.load_file(config_file)
        for key, value in vars(from_env).items():
            if value is not None and key not in ("args", "config"):
                self.cfg.set(key.lower(), value)
        for key, value in self.overrides.items():
            self.cfg.set(key, value)

    def load_file(self, path: str) -> None:
        """A gunicorn configuration file: a Python file whose names that are gunicorn settings set them."""
        for key, value in runpy.run_path(path).items():
            if key in self.cfg.settings and value is not None:
                self.cfg.set(key.lower(), value)

    def load(self):  # noqa: ANN201 - gunicorn's hook, called in each worker after the fork (no preloading)
        from tramita.web import create_app

        return create_app()


def serve(bind: str | None = None, workers: int | None = None, *, config_file: str | None = None) -> None:
    """Run gunicorn until it is stopped (SIGTERM / Ctrl-C stop it gracefully); `bind` and `workers`, when given,
    override every other source of configuration."""
    overrides = {key: value for key, value in (("bind", bind), ("workers", workers)) if value is not None}
    Gunicorn(overrides, config_file).run()
