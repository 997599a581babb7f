"""A throwaway S3 endpoint for the test broker's storage: s3rver, from npm, with conditional writes.

Tansu's memory storage loses every topic when the broker stops; with `--storage-engine s3://<bucket>/` against
this endpoint the topics and offsets outlive a broker killed and started again. Tansu reaches S3 through the
Rust `object_store` crate, configured from the AWS_* variables `tansu_env()` returns (`AWS_ALLOW_HTTP` for a
plain-HTTP endpoint; path-style requests are that crate's default). s3rver accepts its own fixed credentials.

Tansu keeps its producer state (idempotent sequences) and each partition's high watermark in JSON objects that
it updates with optimistic concurrency: PUT with `If-Match: <etag>` or `If-None-Match: *`, re-read and retry
on 412. s3rver 3.x ignores both headers, so two concurrent produce requests lose one update: measured here as
OUT_OF_ORDER_SEQUENCE_NUMBER from two idempotent producers within seconds, and records overwritten after a
restart. The server is therefore started through a few lines of JavaScript (`LAUNCHER`) that put a middleware
in front of s3rver's routes: requests for one key run one at a time, and a PUT whose precondition fails gets
S3's 412 PreconditionFailed.

s3rver also writes a PUT's body straight into the object's file as it arrives. A client that dies in the middle
of an upload (a broker killed with SIGKILL) leaves that object truncated, and s3rver waits for the rest of the
body forever, so every later request for that key would wait too: Tansu's producer-state object stuck that way
is a restarted broker that answers no produce request. S3 stores an object only once its whole body has
arrived, so the middleware reads each PUT's body first and hands s3rver a complete one, or, if the client went
away before the end, answers nothing and stores nothing.
"""

from __future__ import annotations

import os
import shutil
import socket
import tempfile
import urllib.error
import urllib.request
from pathlib import Path

from pgcdc.errors import LocalServiceError
from pgcdc.local.server import LocalServer, free_port

# s3rver's built-in access key and secret (any other pair fails the signature check).
CREDENTIALS = ("S3RVER", "S3RVER")

# node -e LAUNCHER <s3rver package folder> <data folder> <address> <port> <bucket>
LAUNCHER = r"""
'use strict';
const [pkg, directory, address, port, bucket] = process.argv.slice(1);
const S3rver = require(pkg);
const server = new S3rver({ directory, address, port: Number(port), silent: true,
                            configureBuckets: [{ name: bucket, configs: [] }] });
const queues = new Map();  // "bucket/key" -> the promise the last request for that key resolves
// The whole body of a request, or null if the client went away before its end.
function wholeBody(req) {
  return new Promise(resolve => {
    const chunks = [];
    req.on('data', chunk => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', () => resolve(null));
    req.on('close', () => { if (!req.complete) resolve(null); });
  });
}
async function oneAtATime(ctx, next) {
  const [, b, ...rest] = ctx.path.split('/').map(decodeURIComponent);
  const key = rest.join('/');
  if (!b || !key) return next();
  const id = `${b}/${key}`;
  const before = queues.get(id) || Promise.resolve();
  let done;
  const mine = before.then(() => new Promise(resolve => { done = resolve; }));
  queues.set(id, mine);
  await before;
  try {
    if (ctx.method === 'PUT') {
      const body = await wholeBody(ctx.req);
      if (body === null) return;
      ctx.req = require('stream').Readable.from([body]);
    }
    const ifMatch = ctx.get('if-match');
    const ifNoneMatch = ctx.get('if-none-match');
    if (ctx.method === 'PUT' && (ifMatch || ifNoneMatch)) {
      let etag = null;
      try {
        etag = (await server.store.getMetadata(b, key)).etag;
      } catch (err) {
        if (err.code !== 'ENOENT') throw err;
      }
      if ((ifNoneMatch === '*' && etag !== null) || (ifMatch && ifMatch !== etag)) {
        ctx.status = 412;
        ctx.type = 'application/xml';
        ctx.body = '<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>PreconditionFailed</Code>' +
          '<Message>At least one of the pre-conditions you specified did not hold</Message></Error>';
        return;
      }
    }
    await next();
  } finally {
    done();
    if (queues.get(id) === mine) queues.delete(id);
  }
}
server.middleware.unshift(oneAtATime);
server.run().then(({ address, port }) => console.log(`s3rver listening on ${address}:${port}`),
                  err => { console.error(err); process.exit(1); });
"""


def find_s3rver() -> Path:
    """$PGCDC_S3RVER_BIN, else the copy `./dev test` fetches into the cache folder, else `s3rver` on PATH."""
    env = os.environ.get("PGCDC_S3RVER_BIN")
    if env and Path(env).exists():
        return Path(env)
    cache = Path(os.environ.get("PGCDC_PG_CACHE", "/var/tmp/pgcdc"))
    cached = cache / "s3rver" / "node_modules" / ".bin" / "s3rver"
    if cached.exists():
        return cached
    which = shutil.which("s3rver")
    if which:
        return Path(which)
    raise LocalServiceError("s3rver not found: `./dev test` fetches it from npm (s3rver), or set PGCDC_S3RVER_BIN")


class S3Server(LocalServer):
    """Start/stop s3rver on 127.0.0.1 with one bucket in a temporary folder. Use as a context manager."""

    def __init__(self, *, port: int | None = None, bucket: str = "tansu") -> None:
        # .bin/s3rver links to <package>/bin/s3rver.js: the package folder is two levels up from its target.
        self.package = find_s3rver().resolve().parent.parent
        node = shutil.which("node")
        if node is None:
            raise LocalServiceError("s3rver needs Node.js: `node` is not on PATH")
        self.node = node
        self.port = port or free_port()
        self.bucket = bucket
        self.dir = Path(tempfile.mkdtemp(prefix="pgcdc-s3-"))
        self.logfile = self.dir / "s3rver.log"

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def storage_url(self) -> str:
        """Tansu's --storage-engine for this bucket."""
        return f"s3://{self.bucket}/"

    def tansu_env(self) -> dict[str, str]:
        """The variables Tansu's S3 storage reads (object_store's AmazonS3Builder::from_env)."""
        return {"AWS_ENDPOINT": self.endpoint, "AWS_ALLOW_HTTP": "true", "AWS_DEFAULT_REGION": "us-east-1",
                "AWS_ACCESS_KEY_ID": CREDENTIALS[0], "AWS_SECRET_ACCESS_KEY": CREDENTIALS[1]}

    def start(self, timeout: float = 30) -> S3Server:
        data = self.dir / "data"
        data.mkdir(exist_ok=True)
        self.spawn([self.node, "-e", LAUNCHER, str(self.package), str(data), "127.0.0.1", str(self.port),
                    self.bucket])
        return self.wait_until(self._bucket_ready, timeout, 0.1,
                               f"s3rver did not serve bucket {self.bucket!r} on 127.0.0.1:{self.port}")

    def _bucket_ready(self) -> bool:
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=1):
                pass
            # An unsigned HEAD of the bucket: 200 once --configure-bucket created it (s3rver answers anonymous
            # requests).
            req = urllib.request.Request(f"{self.endpoint}/{self.bucket}", method="HEAD")
            with urllib.request.urlopen(req, timeout=2) as resp:
                return bool(resp.status == 200)
        except (OSError, urllib.error.URLError):
            return False
