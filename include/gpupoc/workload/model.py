"""A small two-layer MLP in numpy, trained with minibatch SGD on a synthetic classification task."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

FEATURES = 16
HIDDEN = 32
CLASSES = 2


def synthetic_data(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Points labelled by a fixed random non-linear teacher, with 5% label noise (reachable accuracy ~0.9)."""
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, FEATURES)).astype(np.float32)
    teacher = np.random.default_rng(1234).normal(size=(FEATURES,))
    y = ((x @ teacher + 0.5 * np.sin(3 * x[:, 0])) > 0).astype(np.int64)
    flip = rng.random(n) < 0.05
    y[flip] = 1 - y[flip]
    return x, y


@dataclass
class Mlp:
    """Weights of ``x -> relu(x W1 + b1) W2 + b2 -> softmax``."""

    w1: np.ndarray
    b1: np.ndarray
    w2: np.ndarray
    b2: np.ndarray

    @classmethod
    def init(cls, seed: int) -> "Mlp":
        rng = np.random.default_rng(seed)
        return cls(
            w1=(rng.normal(size=(FEATURES, HIDDEN)) * np.sqrt(2 / FEATURES)).astype(np.float32),
            b1=np.zeros(HIDDEN, np.float32),
            w2=(rng.normal(size=(HIDDEN, CLASSES)) * np.sqrt(2 / HIDDEN)).astype(np.float32),
            b2=np.zeros(CLASSES, np.float32),
        )

    def _forward(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        h = np.maximum(0.0, x @ self.w1 + self.b1)
        logits = h @ self.w2 + self.b2
        logits -= logits.max(axis=1, keepdims=True)
        p = np.exp(logits)
        p /= p.sum(axis=1, keepdims=True)
        return h, p

    def predict(self, x: np.ndarray) -> np.ndarray:
        return self._forward(x)[1].argmax(axis=1)

    def evaluate(self, x: np.ndarray, y: np.ndarray) -> tuple[float, float]:
        """(mean cross-entropy loss, accuracy) on ``x, y``."""
        _, p = self._forward(x)
        loss = float(-np.log(p[np.arange(len(y)), y] + 1e-9).mean())
        return loss, float((p.argmax(axis=1) == y).mean())

    def step(self, x: np.ndarray, y: np.ndarray, lr: float) -> float:
        """One SGD step on a minibatch; returns its loss."""
        h, p = self._forward(x)
        n = len(y)
        loss = float(-np.log(p[np.arange(n), y] + 1e-9).mean())
        d = p.copy()
        d[np.arange(n), y] -= 1.0
        d /= n
        gw2 = h.T @ d
        gb2 = d.sum(axis=0)
        dh = (d @ self.w2.T) * (h > 0)
        gw1 = x.T @ dh
        gb1 = dh.sum(axis=0)
        self.w2 -= lr * gw2
        self.b2 -= lr * gb2
        self.w1 -= lr * gw1
        self.b1 -= lr * gb1
        return loss

    def arrays(self) -> dict[str, np.ndarray]:
        return {"w1": self.w1, "b1": self.b1, "w2": self.w2, "b2": self.b2}
