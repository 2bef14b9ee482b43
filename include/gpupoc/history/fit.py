"""Distributions fitted to published medians and means (the pure part of ``gpupoc history synth``).

- Run and queue times: lognormal with ``mu = ln(median)`` and ``sigma = sqrt(2 ln(mean / median))``, so
  that its median is ``median`` and its mean ``exp(mu + sigma^2 / 2)`` is ``mean``. Run times are capped at
  the published maximum. A median of 0 (Helios' queue) is taken as 0.25 s: rounded to whole seconds, more
  than half the waits are then 0.
- GPUs per job: powers of two up to the published maximum. One GPU with probability ``p1`` (a published
  median of 1 only says ``p1 >= 0.5``; ``p1`` is a stated assumption); ``2^k`` (k >= 1) with probability
  proportional to ``r^k``, ``r`` solved by bisection so that the mean is the published mean. A cap (the
  cluster that will replay it) keeps the fitted shape below the cap and renormalises: the mean then falls.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

# A median of zero cannot be a lognormal's: this stands in for it (see the module docstring).
ZERO_MEDIAN = 0.25


@dataclass(frozen=True)
class LogNormal:
    mu: float
    sigma: float
    cap: float | None = None

    @classmethod
    def from_median_mean(cls, median: float, mean: float, cap: float | None = None) -> "LogNormal":
        m = max(median, ZERO_MEDIAN)
        if mean < m:
            raise ValueError(f"a lognormal needs mean >= median, got median {median} and mean {mean}")
        return cls(mu=math.log(m), sigma=math.sqrt(2 * math.log(mean / m)), cap=cap)

    @property
    def median(self) -> float:
        return math.exp(self.mu)

    @property
    def mean(self) -> float:
        """The mean before the cap."""
        return math.exp(self.mu + self.sigma ** 2 / 2)

    def sample(self, rng: np.random.Generator, n: int) -> np.ndarray:
        x = rng.lognormal(self.mu, self.sigma, n)
        return np.minimum(x, self.cap) if self.cap else x

    def to_dict(self) -> dict:
        return {"distribution": "lognormal", "mu": round(self.mu, 6), "sigma": round(self.sigma, 6),
                "cap": self.cap}


@dataclass(frozen=True)
class PowersOfTwo:
    """A discrete distribution over 1, 2, 4, ... with its probabilities."""

    values: tuple[int, ...]
    probs: tuple[float, ...]
    ratio: float = 1.0
    single_share: float = 0.5

    @classmethod
    def fit(cls, mean: float, max_value: int, single_share: float) -> "PowersOfTwo":
        """``P(1) = single_share``; ``P(2^k)`` proportional to ``r^k``, ``r`` such that the mean is ``mean``."""
        if not 0.5 <= single_share < 1:
            raise ValueError(f"single_share must be in [0.5, 1) for a median of 1, got {single_share}")
        k_max = int(math.floor(math.log2(max_value)))
        values = tuple(2 ** k for k in range(k_max + 1))
        target = (mean - single_share) / (1 - single_share)  # mean of the jobs with more than one GPU
        if k_max < 1 or not 2 <= target <= values[-1]:
            raise ValueError(f"cannot reach a mean of {mean} GPUs with {single_share:.0%} one-GPU jobs and at most "
                             f"{max_value} GPUs")
        lo, hi = -30.0, 30.0
        for _ in range(200):
            mid = (lo + hi) / 2
            if _multi_mean(mid, values) < target:
                lo = mid
            else:
                hi = mid
        log_r = (lo + hi) / 2
        weights = [math.exp(log_r * k) for k in range(1, k_max + 1)]
        total = sum(weights)
        probs = (single_share,) + tuple((1 - single_share) * w / total for w in weights)
        return cls(values=values, probs=probs, ratio=math.exp(log_r), single_share=single_share)

    def capped(self, cap: int | None) -> "PowersOfTwo":
        """The same shape below ``cap``, renormalised."""
        if cap is None or cap >= self.values[-1]:
            return self
        keep = [(v, p) for v, p in zip(self.values, self.probs) if v <= cap]
        if not keep:
            raise ValueError(f"a cap of {cap} GPUs leaves no job size; use at least 1")
        total = sum(p for _, p in keep)
        return PowersOfTwo(tuple(v for v, _ in keep), tuple(p / total for _, p in keep), self.ratio,
                           self.single_share)

    @property
    def mean(self) -> float:
        return sum(v * p for v, p in zip(self.values, self.probs))

    @property
    def median(self) -> int:
        cumulative = 0.0
        for v, p in zip(self.values, self.probs):
            cumulative += p
            if cumulative >= 0.5:
                return v
        return self.values[-1]

    def sample(self, rng: np.random.Generator, n: int) -> np.ndarray:
        return rng.choice(np.array(self.values), size=n, p=np.array(self.probs))

    def to_dict(self) -> dict:
        return {"distribution": "powers of two", "single_gpu_share": self.single_share,
                "ratio": round(self.ratio, 6), "values": list(self.values),
                "probabilities": [round(p, 6) for p in self.probs], "mean": round(self.mean, 4)}


def _multi_mean(log_r: float, values: tuple[int, ...]) -> float:
    weights = [math.exp(log_r * k) for k in range(1, len(values))]
    return sum(w * v for w, v in zip(weights, values[1:])) / sum(weights)


def zipf_weights(n: int, exponent: float) -> np.ndarray:
    """Shares of ``n`` users, the i-th (from 1) proportional to ``1 / i^exponent``."""
    w = 1.0 / np.arange(1, n + 1) ** exponent
    return w / w.sum()
