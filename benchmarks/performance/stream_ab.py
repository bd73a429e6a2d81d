"""A/B: the streamed bound (JAX samplers, 10⁶ and 10⁷ a side) and the black-box bound (numpy,
10⁶), this tree against another checkout, in alternating child processes (best of 5 warm calls
each, best over the rounds). The child code uses the two streamed doors of issue 52
(``streamed_bound(key, JaxSamplers(...) | BlackBox(...), ...)``), so the other checkout must have
them too.

    git worktree add /tmp/base52 f1015e6
    python benchmarks/performance/stream_ab.py /tmp/base52 [rounds]

Writes ``benchmarks/results/performance/stream_ab.json``.
"""

import json
import subprocess
import sys
from pathlib import Path

HERE = str(Path(__file__).resolve().parents[2])
BASE = sys.argv[1] if len(sys.argv) > 1 else "/tmp/base52"
ROUNDS = int(sys.argv[2]) if len(sys.argv) > 2 else 3
CODE = r"""
import sys, time, json, numpy as np, jax, jax.numpy as jnp
sys.path.insert(0, "benchmarks/performance")
import throughput as T
from rdpjax.stream import BlackBox, JaxSamplers, streamed_bound
key = jax.random.key(0)
out = {}
for n in (10**6, 10**7):
    f = lambda: streamed_bound(key, JaxSamplers(T.sample_p, T.sample_q), T.ORDERS, n=n, chunk=2**17)
    f(); ts = []
    for _ in range(5):
        t = time.perf_counter(); f(); ts.append(time.perf_counter() - t)
    out[f"jax_{n}"] = min(ts)
def s(rng, db, m): return db + rng.normal(size=m)
g = lambda: streamed_bound(key, BlackBox(s, 1.0, 0.0), T.ORDERS, n=10**6)
g(); ts = []
for _ in range(5):
    t = time.perf_counter(); g(); ts.append(time.perf_counter() - t)
out["numpy_1000000"] = min(ts)
print(json.dumps(out))
"""
res = {"new": [], "old": []}
for _ in range(ROUNDS):
    for name, root in (("old", BASE), ("new", HERE)):
        r = subprocess.run(
            [sys.executable, "-c", CODE],
            cwd=root,
            capture_output=True,
            text=True,
            env={"PYTHONPATH": root, "PATH": "/usr/bin:/bin"},
        )
        res[name].append(json.loads(r.stdout.strip().splitlines()[-1]))
rows = {}
for k in res["new"][0]:
    new = min(d[k] for d in res["new"])
    old = min(d[k] for d in res["old"])
    rows[k] = {"old_seconds": old, "new_seconds": new, "new_over_old": new / old}
    print(f"{k:16s} old {old * 1e3:8.1f} ms  new {new * 1e3:8.1f} ms  new/old {new / old:.3f}")
out = {"command": f"python benchmarks/performance/stream_ab.py {BASE} {ROUNDS}", "rows": rows}
Path(HERE, "benchmarks/results/performance/stream_ab.json").write_text(json.dumps(out, indent=1))
