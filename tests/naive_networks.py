"""Slow, obviously correct twins for the networks package (pure Python, scalar math)."""

import math

# scalar activations written independently of networks.activations (no numpy, no scipy)
SCALAR = {
    "relu": lambda t: t if t > 0 else 0.0,
    "heaviside": lambda t: 1.0 if t >= 0 else 0.0,
    "sign": lambda t: 1.0 if t >= 0 else -1.0,
    "sigmoid": lambda t: 1.0 / (1.0 + math.exp(-t)) if t >= 0 else math.exp(t) / (1.0 + math.exp(t)),
    "tanh": math.tanh,
    "hardtanh": lambda t: max(-1.0, min(1.0, t)),
    "softplus": lambda t: t + math.log1p(math.exp(-t)) if t > 0 else math.log1p(math.exp(t)),
}


def forward(layers, sigma, x):
    """N(x) by explicit loops; ``layers`` = [(weights rows, bias)], σ on all but the last."""
    h = [float(v) for v in x]
    for index, (weights, bias) in enumerate(layers):
        z = []
        for row, b in zip(weights, bias):
            acc = float(b)
            for w, v in zip(row, h):
                acc += float(w) * v
            z.append(acc)
        h = z if index == len(layers) - 1 else [sigma(v) for v in z]
    assert len(h) == 1
    return h[0]


def mse(layers, sigma, X, y):
    total = 0.0
    for x, target in zip(X, y):
        total += (forward(layers, sigma, x) - float(target)) ** 2
    return total / len(X)


def numeric_gradient(loss_of_params, params, h=1e-6):
    """Central differences of a scalar function over a list of numpy arrays (copied)."""
    grads = []
    for i, p in enumerate(params):
        g = p.copy()
        for j in range(p.size):
            idx = tuple(int(v) for v in divmod(j, p.shape[1])) if p.ndim == 2 else (j,)
            plus = [q.copy() for q in params]
            minus = [q.copy() for q in params]
            plus[i][idx] += h
            minus[i][idx] -= h
            g[idx] = (loss_of_params(plus) - loss_of_params(minus)) / (2 * h)
        grads.append(g)
    return grads


def interval_max_abs(weights, bias, radius):
    """max over ||x|| <= radius of |w·x + b| per row, by the Cauchy–Schwarz argument in loops."""
    out = []
    for row, b in zip(weights, bias):
        norm = math.sqrt(sum(float(w) ** 2 for w in row))
        out.append(abs(float(b)) + radius * norm)
    return out
