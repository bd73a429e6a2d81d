"""Paper 000 §V reproduced: the seven mechanisms on pair (21) at λ = 2, 5, 7 (what
``rdpjax reproduce`` runs).

    python benchmarks/papers/paper_000.py --quick --out benchmarks/results/papers/paper_000_quick
    python benchmarks/papers/paper_000.py --out benchmarks/results/papers/paper_000
        # n = 1e7, R = 200
    python benchmarks/papers/paper_000.py --n 1e5 1e6 1e7 --out benchmarks/results/papers/paper_000

``--out`` receives results.json, results.md and figures/ (per mechanism: the densities behind the
bound, the bound vs λ and, with several --n, the bound vs n). The coverage study at several n is
``benchmarks/papers/coverage.py``.
"""

import sys

from rdpjax.cli import main

if __name__ == "__main__":
    sys.exit(main(["reproduce", *sys.argv[1:]]))
