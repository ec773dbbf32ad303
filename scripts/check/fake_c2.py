#!/usr/bin/env python3
"""A tiny fake Caterva2 server for tests: the files under DIR as root
`@public` (DIR/x.b2nd is `@public/x.b2nd`), through the three endpoints
blosc2fs uses for stored frames:

- `GET /api/roots`: `{"@public": {"name": "@public"}}`;
- `GET /api/list/@public[/DIR]`: the names of every file under that path
  (recursively, relative to it, sorted); a file's own name for a file;
  404 for an unknown path;
- `GET /api/fetch/@public/PATH`: the file, or with `Range: bytes=a-b` the
  206 answer with `Content-Range: bytes a-b/TOTAL` (b clamped to the end;
  416 when a is past it), an `ETag` and a `Last-Modified`.

Anything else is answered 404 (a query string such as `?slice_=`: 400).
Path segments may be percent-encoded (`%40public`). Names starting with
`.` are not served.

Usage: fake_c2.py DIR PORT [--log FILE]
PORT 0 picks a free port. Once listening, prints `listening PORT` on
stdout (and flushes), so a test learns the port without sending a request.
With --log, one line per request is appended to FILE:
`METHOD PATH RANGE` (`-` when no Range header), flushed at once.

Standard library only.
"""

from __future__ import annotations

import argparse
import email.utils
import json
import os
import threading
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

ROOT = "@public"


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "fake-c2/1"

    # Set on the class by main().
    base = "."
    log_file: str | None = None
    log_lock = threading.Lock()

    def log_message(self, format: Any, *args: Any) -> None:  # quiet: the --log file says what came
        pass

    def record(self) -> None:
        if self.log_file is None:
            return
        line = f"{self.command} {self.path} {self.headers.get('Range') or '-'}\n"
        with self.log_lock:
            with open(self.log_file, "a") as f:
                f.write(line)
                f.flush()

    def answer(self, status: Any, body: bytes = b"", headers: Any = ()) -> None:
        self.send_response(status)
        for k, v in headers:
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD" and body:
            self.wfile.write(body)

    def json_answer(self, status: Any, value: Any) -> None:
        self.answer(status, json.dumps(value).encode(), [("Content-Type", "application/json")])

    def not_found(self, what: Any) -> None:
        self.json_answer(404, {"detail": f"not found: {what}"})

    def local(self, segments: Any) -> Any:
        """The file or folder of dataset path segments (after the root), or None."""
        if any(s in ("", ".", "..") or s.startswith(".") or "/" in s or "\0" in s for s in segments):
            return None
        path = os.path.join(self.base, *segments)
        return path if os.path.exists(path) else None

    def do_GET(self) -> Any:
        self.record()
        raw_path, _, query = self.path.partition("?")
        segments = [urllib.parse.unquote(s) for s in raw_path.split("/")]
        # "", "api", endpoint, root, rest...
        if len(segments) < 3 or segments[0] != "" or segments[1] != "api":
            return self.not_found(raw_path)
        endpoint, rest = segments[2], [s for s in segments[3:]]
        while rest and rest[-1] == "":
            rest.pop()
        if query:
            return self.json_answer(400, {"detail": f"the fake server takes no query ({query})"})
        if endpoint == "roots" and not rest:
            return self.json_answer(200, {ROOT: {"name": ROOT}})
        if endpoint not in ("list", "fetch") or not rest or rest[0] != ROOT:
            return self.not_found(raw_path)
        target = self.local(rest[1:]) if rest[1:] else self.base
        if target is None:
            return self.not_found("/".join(rest))
        if endpoint == "list":
            return self.list(target)
        if not os.path.isfile(target):
            return self.not_found("/".join(rest))
        return self.fetch(target)

    def list(self, target: Any) -> Any:
        if os.path.isfile(target):
            return self.json_answer(200, [os.path.basename(target)])
        names = []
        for folder, dirs, files in os.walk(target):
            dirs[:] = [d for d in dirs if not d.startswith(".")]
            for f in files:
                if not f.startswith("."):
                    names.append(os.path.relpath(os.path.join(folder, f), target).replace(os.sep, "/"))
        return self.json_answer(200, sorted(names))

    def fetch(self, target: Any) -> Any:
        st = os.stat(target)
        size = st.st_size
        headers = [
            ("Content-Type", "application/octet-stream"),
            ("ETag", f'"{st.st_mtime_ns:x}-{size:x}"'),
            ("Last-Modified", email.utils.formatdate(st.st_mtime, usegmt=True)),
            ("Accept-Ranges", "bytes"),
        ]
        spec = self.headers.get("Range")
        if spec is None:
            with open(target, "rb") as f:
                return self.answer(200, f.read(), headers)
        unit, _, span = spec.partition("=")
        first, _, last = span.partition("-")
        try:
            if unit.strip() != "bytes" or "," in span:
                raise ValueError(spec)
            a = int(first)
            b = int(last) if last.strip() else size - 1
            if a < 0 or b < a:
                raise ValueError(spec)
        except ValueError:
            return self.json_answer(400, {"detail": f"bad Range {spec!r}"})
        if a >= size:
            return self.answer(416, b"", [("Content-Range", f"bytes */{size}")])
        b = min(b, size - 1)
        with open(target, "rb") as f:
            f.seek(a)
            body = f.read(b - a + 1)
        return self.answer(206, body, headers + [("Content-Range", f"bytes {a}-{b}/{size}")])

    def do_HEAD(self) -> None:
        self.record()
        self.answer(405)

    def do_POST(self) -> None:
        self.record()
        length = int(self.headers.get("Content-Length") or 0)
        if length:
            self.rfile.read(length)
        self.answer(405)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("dir")
    parser.add_argument("port", type=int)
    parser.add_argument("--log")
    args = parser.parse_args()
    Handler.base = os.path.realpath(args.dir)
    Handler.log_file = args.log
    if args.log:
        open(args.log, "a").close()
    server = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    server.daemon_threads = True
    print(f"listening {server.server_address[1]}", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
