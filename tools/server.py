"""The static server of `build.py serve` and of the browser tests: the site's files with the MIME
types Pyodide needs and the strict Content-Security-Policy on every response."""

from __future__ import annotations

import functools
import http.server
import sys
from pathlib import Path

from .common import BuildError
from .pins import CSP


class SiteHandler(http.server.SimpleHTTPRequestHandler):
    extensions_map = {
        **http.server.SimpleHTTPRequestHandler.extensions_map,
        ".js": "text/javascript", ".mjs": "text/javascript", ".wasm": "application/wasm",
        ".json": "application/json", ".whl": "application/zip", ".zip": "application/zip",
        ".css": "text/css", ".svg": "image/svg+xml", ".png": "image/png", ".map": "application/json",
        ".gz": "application/gzip",
    }
    quiet = False

    def send_response(self, code, message=None):
        self._status, self._length = code, 0
        super().send_response(code, message)

    def send_header(self, keyword, value):
        if keyword.lower() == "content-length":
            self._length = int(value)
        super().send_header(keyword, value)

    def end_headers(self):
        # Every response, for the browser tests and measurements: a SharedWorker's requests reach
        # no page listener. (path, status, body bytes)
        self.server.served.append((self.path, self._status, self._length))
        self.send_header("Content-Security-Policy", CSP)
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("Referrer-Policy", "no-referrer")
        self.send_header("Cache-Control", "no-cache")  # always revalidate: a rebuild shows at once
        super().end_headers()

    def list_directory(self, path):
        self.send_error(404, "No directory listings")  # a static host would not list either
        return None

    def log_message(self, fmt, *args):
        if not self.quiet:
            super().log_message(fmt, *args)


class SiteServer(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, *a, **kw):
        self.served = []          # (path, status) of every response, in order
        super().__init__(*a, **kw)

    def handle_error(self, request, client_address):
        # A browser closing a connection mid-download (page closed, test over) is not an error.
        if isinstance(sys.exc_info()[1], (ConnectionResetError, BrokenPipeError)):
            return
        super().handle_error(request, client_address)


def make_server(directory: Path, port: int = 0, quiet: bool = False) -> SiteServer:
    """An HTTP server for `directory` on 127.0.0.1 (port 0 = any free port); call serve_forever()."""
    handler = type("Handler", (SiteHandler,), {"quiet": quiet})
    return SiteServer(("127.0.0.1", port), functools.partial(handler, directory=str(directory)))


def serve(directory: Path, port: int) -> None:
    try:
        server = make_server(directory, port)
    except OSError as e:
        raise BuildError(f"cannot listen on 127.0.0.1:{port} ({e.strerror}); try --port 0") from None
    url = f"http://127.0.0.1:{server.server_address[1]}/"
    print(f"Serving {directory} at {url}  (Ctrl-C to stop)", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
