# SPDX-License-Identifier: MIT
"""A real Prometheus (Debian's `prometheus`) scrapes /metrics of the agent inside Debian's
redis-server: the test writes its configuration, starts it on loopback with a data
directory of its own, and asks its HTTP API that the target is up and what a heapkit gauge
is; the answer is the value /metrics shows. Bounded: about 30 s at most."""

import json
import os
import shutil
import subprocess
import sys
import time
import urllib.parse

from agent_e2e import AGENT_SO, Guest, end, free_port, http
from heapkit_e2e import check, workdir

prometheus = shutil.which("prometheus")
server = shutil.which("redis-server")
if not (prometheus and server):
    print("prometheus or redis-server not installed (Debian: prometheus, redis-server): "
          "skipping")
    sys.exit(77)

directory = workdir()


def metrics(url):
    status, _, body = http(url + "/metrics")
    check(status == 200, f"/metrics: {status}")
    values = {}
    for line in body.decode().splitlines():
        if line and not line.startswith("#"):
            name, _, value = line.rpartition(" ")
            values[name] = float(value)
    return values


def api(base, path, **query):
    status, _, body = http(f"{base}/api/v1/{path}?{urllib.parse.urlencode(query)}")
    check(status == 200, f"prometheus {path}: {status} {body[:300]!r}")
    return json.loads(body)["data"]


redis = Guest([server, "--port", "0", "--unixsocket", os.path.join(directory, "redis.sock"),
               "--save", "", "--appendonly", "no", "--daemonize", "no", "--logfile",
               os.path.join(directory, "redis.log")],
              preload=[AGENT_SO], env={"MALLOC_CONF": "prof:true"})
scraper = None
try:
    url = redis.url()
    target = url.removeprefix("http://")
    config = os.path.join(directory, "prometheus.yml")
    with open(config, "w") as f:
        f.write("global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n"
                "scrape_configs:\n  - job_name: heapkit-agent\n"
                f"    static_configs:\n      - targets: ['{target}']\n"
                "        labels: {service: redis}\n")
    web = f"127.0.0.1:{free_port()}"
    scraper = subprocess.Popen(
        [prometheus, f"--config.file={config}", f"--storage.tsdb.path={directory}/data",
         f"--web.listen-address={web}", "--log.level=warn"],
        stdout=subprocess.DEVNULL, stderr=open(os.path.join(directory, "prometheus.log"), "w"))
    base = f"http://{web}"
    up = None
    for _ in range(100):  # up to about 30 s: start, first scrapes
        check(scraper.poll() is None, f"prometheus exited {scraper.returncode}: " +
              open(os.path.join(directory, "prometheus.log")).read()[-1000:])
        try:
            targets = api(base, "targets")["activeTargets"]
            up = [t for t in targets if t["labels"]["job"] == "heapkit-agent"]
            if up and up[0]["health"] == "up":
                break
        except (OSError, SystemExit):
            pass
        time.sleep(0.3)
    check(up and up[0]["health"] == "up", f"the agent's target is not up: {up}")
    check(up[0]["scrapeUrl"] == url + "/metrics", f"scrape URL {up[0]['scrapeUrl']}")

    # A gauge that holds still in an idle redis: the same in two reads of /metrics around
    # Prometheus' answer, so the scrape it stored saw that value too. The agent's own
    # requests move pages between jemalloc's retained, dirty and mapped, and its decay moves
    # them back over seconds, so those gauges hold still only by chance. Active pages come back
    # to the same figure once each request has freed what it used (allocated does not:
    # Prometheus' request, gzip and all, allocates other sizes than ours).
    names = [f"heapkit_jemalloc_{stat}_bytes"
             for stat in ("active", "mapped", "retained", "resident")]
    selector = '{__name__=~"' + "|".join(names) + '",job="heapkit-agent",service="redis"}'
    for _ in range(20):
        before = metrics(url)
        check(any(n in before for n in names), f"no jemalloc gauge in /metrics: "
                                               f"{sorted(before)[:10]}")
        time.sleep(1.5)  # a scrape in between
        stored = {r["metric"]["__name__"]: float(r["value"][1])
                  for r in api(base, "query", query=selector)["result"]}
        after = metrics(url)
        name = next((n for n in names
                     if n in stored and n in before and before[n] == after.get(n)), None)
        if name is not None:
            check(stored[name] == after[name],
                  f"prometheus has {name}={stored[name]}, /metrics {after[name]}")
            print(f"prometheus: {name} = {stored[name]}, as /metrics says")
            break
    else:
        check(False, "no stable gauge to compare in 20 tries")
finally:
    if scraper is not None:
        end(scraper)
    redis.stop()
print("ok")
