#!/usr/bin/env python3
"""Fits a game's heuristic (`Evaluate::WEIGHTS` in src/ai/eval.rs, issue
51) to positions with their games' results:

    cargo run --release --example fit_data -- VARIANT 1200 3 > positions.csv
    pip install numpy
    python3 benches/fit_heuristic.py positions.csv

Each line: the position's features from the side of the player to move
(`Evaluate::features`, the first is 1), the hand-written estimate of that
player's score, and their score at the end. A logistic model of the
chance that the player to move wins, fitted by Newton's method with an L2
penalty on the first four fifths of the lines and scored on the last
fifth beside the hand-written estimate. Prints the weights in the order
of the features.
"""
import sys

import numpy as np


def fit(x, y, l2=1e-3, steps=50):
    w = np.zeros(x.shape[1])
    for _ in range(steps):
        p = 1 / (1 + np.exp(-x @ w))
        grad = x.T @ (p - y) / len(y) + l2 * w
        hess = (x * (p * (1 - p))[:, None]).T @ x / len(y) + l2 * np.eye(len(w))
        w -= np.linalg.solve(hess, grad)
    return w


def score(p, y):
    p = np.clip(p, 1e-6, 1 - 1e-6)
    loss = -np.mean(y * np.log(p) + (1 - y) * np.log(1 - p))
    return f"log-loss {loss:.3f}, winner right {np.mean((p > 0.5) == (y > 0.5)):.1%}"


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    d = np.loadtxt(sys.argv[1], delimiter=",", ndmin=2)
    if d.shape[1] < 3 or not np.all(d[:, 0] == 1):
        sys.exit(f"{sys.argv[1]}: not the output of examples/fit_data.rs "
                 "(features starting with 1, the estimate, the result)")
    x, estimate, y = d[:, :-2], d[:, -2], d[:, -1]
    cut = len(x) * 4 // 5
    w = fit(x[:cut], y[:cut])
    print(f"{len(x)} positions, {x.shape[1]} features; the held-out fifth:")
    print(f"  fitted:       {score(1 / (1 + np.exp(-x[cut:] @ w)), y[cut:])}")
    print(f"  hand-written: {score(estimate[cut:], y[cut:])}")
    print("weights:", ", ".join(f"{v:.4f}" for v in w))


if __name__ == "__main__":
    main()
