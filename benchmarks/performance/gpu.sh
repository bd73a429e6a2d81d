#!/usr/bin/env bash
# Throughput suite (benchmarks/performance/throughput.py) on one GPU, in under 5 minutes; writes
# benchmarks/results/performance/throughput_<platform>.json and prints the table.
#
#   bash benchmarks/performance/gpu.sh            # full sizes (KDE 1e7, stream 1e9 per side, R = 1000)
#   bash benchmarks/performance/gpu.sh --quick    # small sizes
#   JAX_PLATFORMS=cpu bash benchmarks/performance/gpu.sh --quick   # the CPU path of this script
#
# Needs jax with CUDA (pip install -U "jax[cuda12]"), optax, KDEpy, statsmodels and scipy in
# $PYTHON (default .venv/bin/python, else python3); rdpjax is imported from this checkout.
# Binning: jaxlib 0.10.2–0.11 may compile the GPU scatter-add to a compare-and-swap retry loop
# (openxla/xla#46225). The suite times scatter against the sort-based formulation first; if
# scatter is slower, the streamed runs use binning="sort" (override with BINNING=scatter|sort).
set -euo pipefail
cd "$(dirname "$0")/../.."
if [ -z "${PYTHON:-}" ]; then
    PYTHON=python3
    [ -x .venv/bin/python ] && PYTHON=.venv/bin/python
fi
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"      # this checkout's rdpjax
export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0}   # one GPU
export XLA_PYTHON_CLIENT_PREALLOCATE=false               # device memory peaks are then real

platform=$("$PYTHON" -c 'import jax; print(jax.default_backend())')
if [ "$platform" != "gpu" ]; then
    echo "gpu.sh: no GPU visible to jax (backend: $platform); running the suite on $platform." >&2
fi
chunk=131072                 # 2^17: best on CPU (rdpjax.stream.DEFAULT_STREAM_CHUNK)
[ "$platform" = "gpu" ] && chunk=4194304   # 2^22: amortizes kernel launches on a GPU

binning=${BINNING:-}
if [ -z "$binning" ]; then
    binning=$(CHUNK=$chunk "$PYTHON" - <<'PY'
import os, sys
sys.path.insert(0, "benchmarks/performance")
import throughput
r = throughput.binning_section(int(os.environ["CHUNK"]), 3)
print(r["recommended_binning"])
PY
)
    binning=$(echo "$binning" | tail -n 1)
fi
echo "gpu.sh: platform=$platform chunk=$chunk binning=$binning"
exec timeout 600 "$PYTHON" benchmarks/performance/throughput.py --out "benchmarks/results/performance/throughput_${platform}.json" \
    --chunk "$chunk" --binning "$binning" "$@"
