# SPDX-License-Identifier: MIT
"""Fault injection: latency, error answers, resets, cut and slow streams, vanishing sandboxes.

Rules come from POST /_fake/faults as {"latency_ms": N, "rules": [RULE, ...]}. A rule
matches a request by "method" ("*" by default) and "path" (a regular expression
searched in the path), fires "times" times (default 1, -1 = always), then is spent:
  {"status": 503, "retry_after": 1, "body": {...} or "text", "content_type": "..."}
  {"action": "reset"}                 close the connection with a TCP reset, no answer
  {"action": "cut_stream", "after_events": N}   drop a stream after N envelopes
  {"action": "slow_stream", "delay_ms": N}       wait before every envelope
  {"action": "truncate"}              promise more body bytes than are sent, then close
  {"action": "drop_answer"}           carry the request out, then reset instead of answering
  {"action": "vanish"}                the request's sandbox disappears first
  {"delay_ms": N}                     only delay this answer
"""
import re
import threading


class Faults:
    def __init__(self):
        self.lock = threading.Lock()
        self.latency_ms = 0
        self.rules = []

    def configure(self, spec):
        rules = []
        for r in spec.get("rules", []):
            r = dict(r)
            r["_rx"] = re.compile(r.get("path", ""))
            r.setdefault("times", 1)
            r.setdefault("method", "*")
            r["fired"] = 0
            rules.append(r)
        with self.lock:
            self.latency_ms = int(spec.get("latency_ms", 0))
            self.rules = rules

    def take(self, method, path):
        """The first live rule for this request (counted as fired), or None."""
        with self.lock:
            for r in self.rules:
                if r["times"] == 0:
                    continue
                if r["method"] not in ("*", method) or not r["_rx"].search(path):
                    continue
                if r["times"] > 0:
                    r["times"] -= 1
                r["fired"] += 1
                return r
        return None

    def report(self):
        with self.lock:
            return [{k: v for k, v in r.items() if not k.startswith("_")} for r in self.rules]
