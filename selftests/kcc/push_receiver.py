#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""push_receiver.py - a stand-in for a Pyroscope server's POST /ingest,
for selftests/kcc/serve.sh (kcc serve --push).

Usage: push_receiver.py PORTFILE OUTDIR [STATUS]

Listens on 127.0.0.1 (a free port, written to PORTFILE), answers every
request with STATUS (default 200) and checks each one against Pyroscope's
HTTP API: POST to /ingest; the query parameters name (an application
name with {labels}), from and until (Unix seconds, from <= until) and
format=pprof; a multipart/form-data body with a part "profile" that is
a gzip stream and a part "sample_type_config" that is a JSON object of
objects with "units" and "aggregation".  Request i's profile goes to
OUTDIR/i.pb.gz and one line per request to OUTDIR/log:

    i ok|bad:REASON name from until sample-types
"""
import email.parser
import email.policy
import gzip
import json
import os
import sys
import urllib.parse
from http.server import BaseHTTPRequestHandler, HTTPServer


def check(handler, body):
    """(None, fields) or (reason, None) for one request."""
    url = urllib.parse.urlsplit(handler.path)
    if handler.command != "POST" or url.path != "/ingest":
        return "not POST /ingest: %s %s" % (handler.command, url.path), None
    q = urllib.parse.parse_qs(url.query, keep_blank_values=True)
    for k in ("name", "from", "until", "format"):
        if len(q.get(k, [])) != 1:
            return "query parameter %s missing or repeated" % k, None
    name = q["name"][0]
    if "{" not in name or not name.endswith("}") or name.startswith("{"):
        return "name without an application and {labels}: %r" % name, None
    if q["format"][0] != "pprof":
        return "format %r" % q["format"][0], None
    try:
        t0, t1 = int(q["from"][0]), int(q["until"][0])
    except ValueError:
        return "from/until not integers", None
    if t0 > t1 or t0 < 1500000000:
        return "from %d until %d" % (t0, t1), None
    ctype = handler.headers.get("Content-Type", "")
    if not ctype.startswith("multipart/form-data; boundary="):
        return "Content-Type %r" % ctype, None
    msg = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(
        b"Content-Type: " + ctype.encode() + b"\r\n\r\n" + body)
    parts = {}
    for p in msg.iter_parts():
        parts[p.get_param("name", header="content-disposition")] = \
            p.get_payload(decode=True)
    if set(parts) != {"profile", "sample_type_config"}:
        return "parts %s" % sorted(k or "" for k in parts), None
    try:
        gzip.decompress(parts["profile"])
    except OSError:
        return "profile is not gzip", None
    try:
        cfg = json.loads(parts["sample_type_config"])
    except ValueError:
        return "sample_type_config is not JSON", None
    if not isinstance(cfg, dict) or not cfg or not all(
            isinstance(v, dict) and "units" in v and "aggregation" in v
            for v in cfg.values()):
        return "sample_type_config entries: %r" % cfg, None
    return None, (name, t0, t1, ",".join(sorted(cfg)), parts["profile"])


class Handler(BaseHTTPRequestHandler):
    def do_any(self):
        n = int(self.headers.get("Content-Length", "0"))
        body = self.rfile.read(n)
        srv = self.server
        srv.count += 1
        why, f = check(self, body)
        with open(os.path.join(srv.out, "log"), "a") as log:
            if why:
                log.write("%d bad:%s\n" % (srv.count, why.replace(" ", "_")))
            else:
                with open(os.path.join(srv.out, "%d.pb.gz" % srv.count),
                          "wb") as pb:
                    pb.write(f[4])
                log.write("%d ok %s %d %d %s\n" % (srv.count, f[0], f[1],
                                                  f[2], f[3]))
        self.send_response(srv.status)
        self.send_header("Content-Length", "0")
        self.end_headers()

    do_POST = do_any
    do_GET = do_any

    def log_message(self, *args):
        pass


def main():
    srv = HTTPServer(("127.0.0.1", 0), Handler)
    srv.out = sys.argv[2]
    srv.status = int(sys.argv[3]) if len(sys.argv) > 3 else 200
    srv.count = 0
    with open(sys.argv[1] + ".tmp", "w") as f:
        f.write("%d\n" % srv.server_address[1])
    os.rename(sys.argv[1] + ".tmp", sys.argv[1])
    srv.serve_forever()


if __name__ == "__main__":
    main()
