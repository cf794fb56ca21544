"""Random streams and memory blocks shared by every resampling function in `stats`.

- `as_generator`: the one coercion of a seed or a generator into a `numpy.random.Generator`;
  functions that take `rng`/`seed` never touch numpy's global state.
- `MAX_CELLS` and `block_rows`: the one memory budget of the blockwise loops (bootstrap
  resamples, permutations, threshold scans). Blocks bound memory only: every loop draws its
  random numbers in the same order whatever the block size, so results agree to rounding.
"""
from __future__ import annotations

import numpy as np

MAX_CELLS = 1 << 25  # float64 cells one block may hold (~256 MB)

SeedOrGenerator = int | np.random.Generator


def as_generator(seed_or_rng: SeedOrGenerator) -> np.random.Generator:
    """The generator itself, or a new one seeded with the integer.

    Args:
        seed_or_rng: An integer seed, or a generator to draw from (it is used, not copied, so
            successive calls continue its stream).

    Returns:
        A `numpy.random.Generator`.

    Examples:
        >>> as_generator(7).integers(0, 100, 3).tolist() == as_generator(7).integers(0, 100, 3).tolist()
        True
        >>> g = np.random.default_rng(0)
        >>> as_generator(g) is g
        True
    """
    if isinstance(seed_or_rng, np.random.Generator):
        return seed_or_rng
    return np.random.default_rng(seed_or_rng)


def block_rows(cells_per_row: int) -> int:
    """Rows per block so that a block of rows, each `cells_per_row` cells wide, stays within `MAX_CELLS`.

    Args:
        cells_per_row: Float cells one row of the block holds, temporaries included.

    Returns:
        At least 1 (a single row wider than the budget still runs).

    Examples:
        >>> block_rows(1 << 20)
        32
        >>> block_rows(0) == MAX_CELLS
        True
    """
    return max(1, MAX_CELLS // max(int(cells_per_row), 1))
