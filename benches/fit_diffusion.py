#!/usr/bin/env python3
"""Fits the Diffusion heuristic of src/ai/eval.rs (`diffusion_fitted`,
issue 51) to positions with their games' results:

    cargo run --release --example diffusion_data -- 1200 3 > positions.csv
    pip install numpy
    python3 benches/fit_diffusion.py positions.csv

A logistic model of the chance that the player to move wins, the board
seen from the mover's side (rotated half a turn for North: the mover's
block is then the three left columns), fitted by Newton's method with an
L2 penalty on the first four fifths of the lines and scored on the last
fifth, beside the hand-written estimate. Prints the weights in the order
of `DIFFUSION_WEIGHTS`.
"""
import sys

import numpy as np


def features(far, near):
    mine = np.concatenate([far[:, :3], near[:, :3]], 1)
    theirs = np.concatenate([far[:, 3:], near[:, 3:]], 1)
    held = lambda b: (b > 0).sum(1, keepdims=True)
    return np.concatenate([
        np.ones((len(far), 1)),
        far, near, (far == 0) * 1.0, (near == 0) * 1.0,
        mine.sum(1, keepdims=True), theirs.sum(1, keepdims=True),
        held(mine), held(theirs),
        (held(mine) == 1) * 1.0, (held(theirs) == 1) * 1.0,
    ], 1)


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
    if d.shape[1] != 15:
        sys.exit(f"{sys.argv[1]}: {d.shape[1]} columns, 15 wanted (examples/diffusion_data.rs)")
    north, south, seat, south_score = d[:, :6], d[:, 6:12], d[:, 12], d[:, 14]
    north_moves = seat[:, None] == 1
    far = np.where(north_moves, south[:, ::-1], north)
    near = np.where(north_moves, north[:, ::-1], south)
    y = np.where(seat == 0, south_score, 1 - south_score)
    x = features(far, near)
    cut = len(x) * 4 // 5
    w = fit(x[:cut], y[:cut])
    print(f"{len(x)} positions; the held-out fifth:")
    print(f"  fitted:       {score(1 / (1 + np.exp(-x[cut:] @ w)), y[cut:])}")
    mine = x[cut:, 25]
    theirs = x[cut:, 26]
    print(f"  hand-written: {score(1 / (1 + np.exp(-(theirs - mine) / 6)), y[cut:])}")
    print("weights:", ", ".join(f"{v:.4f}" for v in w))


if __name__ == "__main__":
    main()
