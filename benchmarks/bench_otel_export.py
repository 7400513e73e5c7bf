"""`lore otel export` throughput: spans per second, mapping + encoding + sending, to a local
sink that accepts and discards.

    .venv/bin/python benchmarks/bench_otel_export.py [--actions 100000] [--per-session 200]
                                                    [--runs 3] [--json]

A store of `--actions` actions in sessions of `--per-session` (tool calls, one tracked
subagent in ten, one failure in twenty, a child action in ten; schema-valid lines written
straight into the shards) is exported with `Lorebook.otel_export` to a minimal OTLP/HTTP
sink on 127.0.0.1 in another process (HTTP/1.1 keep-alive, answers 200, discards the body).
Reported per run: the whole export (read the shards, map, build the SDK spans, encode
protobuf, post in batches from one worker process per core, write the watermark) in spans/s,
the same in one process (`workers=1`), each from a process of its own, the CPU time each
took per span (all its processes: steadier than wall time when other work shares the
machine), on the same records in this process the mapping alone and building + encoding
alone, and the protobuf backend the SDK's encoder runs on (upb, in C, with protobuf >= 4.21;
"python" would be several times slower). Target: >= 20,000 spans/s on the machine's 2 cores.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from _common import REPO, machine, median

sys.path.insert(0, str(REPO / "src"))

SINK = """
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
class H(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def do_POST(self):
        self.rfile.read(int(self.headers["Content-Length"]))
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", "0")
        self.end_headers()
    def log_message(self, *a):
        pass
s = ThreadingHTTPServer(("127.0.0.1", 0), H)
print(s.server_address[1], flush=True)
s.serve_forever()
"""


def records(actions: int, per_session: int) -> dict[str, list[dict[str, Any]]]:
    """session -> its records (a start event, the actions, an end event)."""
    out: dict[str, list[dict[str, Any]]] = {}
    for n in range(actions):
        session = f"bench-{n // per_session:05d}"
        rows = out.setdefault(session, [])
        base = n % per_session
        second = 10 * 3600 + base
        ts = f"2026-11-20T{second // 3600:02d}:{second // 60 % 60:02d}:{second % 60:02d}.000Z"
        if base == 0:
            rows.append({"v": 1, "kind": "session", "event": "start", "id": f"01K{n:023d}",
                         "ts": ts, "session": session, "agent": "claude-code", "project": "p",
                         "session_type": "hook", "meta": {}})  # fmt: skip
        call = {"tool": "Bash", "tool_use_id": f"toolu_{n}", "input": {"command": "make test"}}
        kind, parent, outcome, context = "tool_call", None, "success", call
        if base % 10 == 1:
            kind, outcome, context = "spawn", "in_progress", {"agent_type": "reviewer"}
        elif base % 10 == 2 and base > 1:
            kind, parent, context = "spawn", f"01M{n - 1:023d}", {"agent_type": "reviewer"}
        elif base % 10 == 3 and base > 2:
            parent = f"01M{n - 2:023d}"
        if base % 20 == 7:
            outcome = "failure"
        rows.append({"v": 1, "kind": "action", "id": f"01M{n:023d}", "ts": ts, "session": session,
                     "agent": "claude-code", "project": "p", "type": kind,
                     "category": "execution", "outcome": outcome, "context": context,
                     "error": "exit 1" if outcome == "failure" else None, "duration_s": None,
                     "parent": parent, "epic": None,
                     "issue": None, "meta": {}})  # fmt: skip
    return out


def write_store(root: Path, by_session: dict[str, list[dict[str, Any]]]) -> None:
    from lorebook import Lorebook

    subprocess.run(["git", "init", "-q", str(root)], check=True)
    Lorebook.init(root, env={})
    day = root / "actionlog" / "2026" / "11" / "20"
    day.mkdir(parents=True, exist_ok=True)
    for session, rows in by_session.items():
        text = "".join(json.dumps(r, sort_keys=True, separators=(",", ":")) + "\n" for r in rows)
        (day / f"{session}.jsonl").write_text(text, encoding="utf-8")


EXPORT = """
import json, resource, sys, time
from lorebook import Lorebook
from lorebook.otel.run import export, repository
from lorebook.otel.send import require

def cpu():
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + children.ru_utime + children.ru_stime

require()
root, url, workers = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
with Lorebook.open(root, env={}) as book:
    started, used = time.perf_counter(), cpu()
    if workers is None:  # the library call, as `lore otel export` makes it
        result = book.otel_export(url)
    else:
        result = export(book.layout, book.sanitizer, repository(book.root), url, workers=workers)
    print(json.dumps([result, time.perf_counter() - started, cpu() - used]))
"""


def exported(root: Path, url: str, workers: int | None) -> tuple[dict[str, Any], float, float]:
    """(what `Lorebook.otel_export` sent, its seconds, its CPU seconds in all its processes)
    from a process of its own (the SDK imported first, as by `lore otel export`): this one
    holds every record and span of the store, which its forked workers would inherit and
    their garbage collections walk."""
    done = subprocess.run([sys.executable, "-c", EXPORT, str(root), url, json.dumps(workers)],
                          capture_output=True, text=True, check=True,
                          env={**os.environ, "PYTHONPATH": str(REPO / "src")})  # fmt: skip
    result, seconds, used = json.loads(done.stdout)
    return result, seconds, used


def protobuf_backend() -> str:
    """The protobuf version and the backend its messages run on (upb, cpp or python)."""
    import google.protobuf
    from google.protobuf.internal import api_implementation

    return f"{google.protobuf.__version__} ({api_implementation.Type()})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--actions", type=int, default=100_000)
    parser.add_argument("--per-session", type=int, default=200)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    from lorebook.otel import spans
    from lorebook.otel.send import Sender

    by_session = records(args.actions, args.per_session)
    repo = spans.Repository("example.com/acme/shop", "https://example.com/acme/shop", "0" * 40)
    sink = subprocess.Popen([sys.executable, "-c", SINK], stdout=subprocess.PIPE, text=True)
    try:
        assert sink.stdout is not None
        url = f"http://127.0.0.1:{sink.stdout.readline().strip()}"
        runs: list[dict[str, float]] = []
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp) / "store"
            write_store(root, by_session)
            for _ in range(args.runs):
                started = time.perf_counter()
                made = [s for k, rows in by_session.items()
                        for s in spans.session_spans(k, rows, repo)]  # fmt: skip
                mapped = time.perf_counter() - started
                expected = len(made)
                sender = Sender(url, url, str)
                from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans

                started = time.perf_counter()
                for i in range(0, len(made), 2000):
                    encode_spans(sender.build(made[i : i + 2000])).SerializePartialToString()
                encoded = time.perf_counter() - started
                sender.close()
                del made
                result, whole, whole_cpu = exported(root, url, None)
                _, alone, alone_cpu = exported(root, url, 1)
                count = result["spans"]
                assert count == expected, (count, expected)
                runs.append({"spans": count, "export_s": whole, "one_process_s": alone,
                             "export_cpu_s": whole_cpu, "one_process_cpu_s": alone_cpu,
                             "map_s": mapped, "build_encode_s": encoded})  # fmt: skip
    finally:
        sink.terminate()
        sink.wait()
    count = runs[0]["spans"]
    figures = {
        "actions": args.actions,
        "spans": count,
        "runs": runs,
        "export_spans_per_s": count / median([r["export_s"] for r in runs]),
        "one_process_spans_per_s": count / median([r["one_process_s"] for r in runs]),
        "export_cpu_us_per_span": 1e6 * median([r["export_cpu_s"] for r in runs]) / count,
        "one_process_cpu_us_per_span": 1e6 * median([r["one_process_cpu_s"] for r in runs]) / count,
        "map_spans_per_s": count / median([r["map_s"] for r in runs]),
        "build_encode_spans_per_s": count / median([r["build_encode_s"] for r in runs]),
        "target_spans_per_s": 20_000,
        "protobuf": protobuf_backend(),
        "machine": machine(),
    }
    if args.json:
        print(json.dumps(figures, indent=2))
        return
    print(f"{args.actions} actions -> {count} spans, median of {args.runs} run(s):")
    print(f"  whole export (read, map, build, encode, send): "
          f"{figures['export_spans_per_s']:,.0f} spans/s (target >= 20,000)")  # fmt: skip
    print(f"  the same in one process: {figures['one_process_spans_per_s']:,.0f} spans/s")
    print(f"  CPU per span (the exporting process and its workers): "
          f"{figures['export_cpu_us_per_span']:.1f} us (one process: "
          f"{figures['one_process_cpu_us_per_span']:.1f} us)")  # fmt: skip
    print(f"  mapping alone: {figures['map_spans_per_s']:,.0f} spans/s")
    print(f"  building + encoding alone: {figures['build_encode_spans_per_s']:,.0f} spans/s")
    print(f"  protobuf: {figures['protobuf']}")


if __name__ == "__main__":
    main()
