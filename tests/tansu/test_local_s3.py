"""The test broker's S3 endpoint (pgcdc/local/s3.py): s3rver behind a middleware that gives it S3's conditional
writes and whole-object PUTs."""

from __future__ import annotations

import socket
import time
import urllib.error
import urllib.request

from pgcdc.local import S3Server


def test_s3_put_cut_short_stores_nothing_and_blocks_nothing() -> None:
    """A client that dies in the middle of a PUT (the broker killed while writing an object) leaves the object as
    it was, and the next request for that key is answered (s3rver alone truncates the object and waits)."""
    with S3Server() as s3:
        url = f"{s3.endpoint}/{s3.bucket}/clusters/x/meta.json"
        urllib.request.urlopen(urllib.request.Request(url, data=b'{"v":1}', method="PUT"), timeout=10).close()
        with socket.create_connection(("127.0.0.1", s3.port)) as sock:
            sock.sendall(f"PUT /{s3.bucket}/clusters/x/meta.json HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                         f"Content-Length: 200000\r\n\r\n".encode() + b"x" * 100_000)
            time.sleep(0.5)  # the proxy has the first half of the body when the client goes away
        with urllib.request.urlopen(url, timeout=10) as resp:
            assert resp.read() == b'{"v":1}'


def test_s3_conditional_put() -> None:
    """If-None-Match: * creates only a missing object; If-Match writes only over the ETag given (412 otherwise)."""
    with S3Server() as s3:
        url = f"{s3.endpoint}/{s3.bucket}/w.json"

        def put(body: bytes, **headers: str) -> int:
            req = urllib.request.Request(url, data=body, method="PUT", headers=headers)
            try:
                with urllib.request.urlopen(req, timeout=10) as resp:
                    return int(resp.status)
            except urllib.error.HTTPError as exc:
                return exc.code

        assert put(b"1", **{"If-None-Match": "*"}) == 200
        assert put(b"2", **{"If-None-Match": "*"}) == 412
        with urllib.request.urlopen(url, timeout=10) as resp:
            etag = resp.headers["ETag"]
        assert put(b"3", **{"If-Match": '"0123"'}) == 412
        assert put(b"4", **{"If-Match": etag}) == 200
        assert put(b"5", **{"If-Match": etag}) == 412
        with urllib.request.urlopen(url, timeout=10) as resp:
            assert resp.read() == b"4"
