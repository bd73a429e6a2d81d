"""Exit statuses of ``rdpjax audit`` interrupted by Ctrl-C at many moments (issue 54).

    python benchmarks/performance/interrupts.py [--interrupts 50] [--out FILE.json]

A numpy black box (Laplace noise, slowed so that an audit lasts some seconds) is audited with
``--until-refuted --report DIR`` against a true claim, so it runs to ``max_n``. The first run
is interrupted to leave a checkpoint; every later run ``--resume``s it and gets SIGINT after a
delay drawn uniformly from (0, 6) s (from the interpreter's start: imports, the parse, the
checkpoint's reading, drawing, binning, writing). A run that finishes first is restarted from a
fresh folder. Printed: the exit statuses seen, which must be 130 for an interrupted run (never
139, a crash in the interpreter's teardown, seen once in eleven before the fix) and the stderr
of any other (-2, killed by SIGINT before rdpjax's first line ran, is what a shell reports as
130 too). The delays come from a fixed seed; the machine's load moves what they hit.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import platform
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]

SLOW_PY = """
import time

import numpy as np


def slow_laplace(rng, database, n):
    time.sleep(0.002 * (1 + n // 1000))  # about 0.5 ms per thousand outputs, and a call's cost
    return float(np.sum(database)) + rng.laplace(0.0, 1.0, size=n)
"""


def _terminal_like() -> None:  # in the child, before exec: SIGINT as a shell leaves it
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


def interrupted_run(argv: list[str], delay: float, cwd: Path) -> tuple[int, str, bool]:
    """``python -m rdpjax.cli ARGV`` with SIGINT after ``delay`` s: (status, stderr, sent)."""
    env = dict(os.environ, PYTHONPATH=str(ROOT), RDPJAX_NO_CACHE="1")
    proc = subprocess.Popen(
        [sys.executable, "-m", "rdpjax.cli", *argv], stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True, env=env, cwd=cwd, preexec_fn=_terminal_like,
    )  # fmt: skip
    time.sleep(delay)
    sent = proc.poll() is None
    if sent:
        proc.send_signal(signal.SIGINT)
    try:
        _, err = proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        proc.kill()
        _, err = proc.communicate()
        return -9, err, sent
    return proc.returncode, err, sent


def run(interrupts: int, seed: int = 0, max_delay: float = 6.0) -> dict:
    rng = np.random.default_rng(seed)
    statuses: collections.Counter = collections.Counter()
    odd = []
    with tempfile.TemporaryDirectory() as tmp:
        cwd = Path(tmp)
        (cwd / "mech.py").write_text(SLOW_PY)
        base = ["audit", "mech.py:slow_laplace", "--numpy", "--x", "[1]", "--x-prime", "[0]",
                "--claim-epsilon", "3", "--until-refuted", "--max-n", "1e6", "--quiet"]  # fmt: skip
        folder = 0
        resume = False
        for i in range(interrupts):
            report = ["--resume", f"r{folder}"] if resume else ["--report", f"r{folder}"]
            delay = float(rng.uniform(0.0, max_delay))
            status, err, sent = interrupted_run(base + report, delay, cwd)
            key = f"{status} ({'interrupted' if sent else 'finished first'})"
            # -2: killed by SIGINT before rdpjax's first line ran (Python's own handling, in
            # the interpreter's first ~50 ms); a shell reports it as 130 too.
            early = delay < 0.05 and status == 1 and "Could not import runpy" in err
            if early:  # the interpreter itself, before any Python code of ours
                key = "1 (interpreter starting: 'Could not import runpy module')"
            elif sent and status not in (130, -2) or not sent and status not in (0, 1):
                odd.append({"run": i, "delay": delay, "status": status, "stderr": err[-2000:]})
            statuses[key] += 1
            # A checkpoint exists once a run was interrupted while drawing; a finished audit
            # (or one stopped before it wrote one) starts again in a fresh folder.
            resume = (cwd / f"r{folder}" / "sequential.npz").exists()
            if not sent or not resume:
                folder, resume = folder + 1, False
            print(f"run {i + 1:>3}: SIGINT at {delay:4.2f} s -> exit {status}", flush=True)
    return {"statuses": dict(statuses), "odd": odd}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--interrupts", type=int, default=50)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--max-delay", type=float, default=6.0, help="seconds (default 6)")
    parser.add_argument(
        "--out", type=Path, default=ROOT / "benchmarks/results/performance/interrupts.json"
    )
    args = parser.parse_args()
    t0 = time.perf_counter()
    result = run(args.interrupts, args.seed, args.max_delay)
    result |= {
        "command": "python benchmarks/performance/interrupts.py "
        f"--interrupts {args.interrupts} --seed {args.seed} --max-delay {args.max_delay:g}",
        "machine": platform.platform(),
        "seconds": time.perf_counter() - t0,
    }
    print(json.dumps(result["statuses"], indent=1))
    for case in result["odd"]:
        print(f"unexpected: {case}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
