"""RepresenterExplainer on PyTorch networks, TracInCP and the last layer's influence function (issue 43).

Every value is checked against something computed independently: the fine-tuned network's output by its own
forward pass (the identity), Yeh et al.'s formula ``alpha_i = -1/(2 lam n) dL/dPhi_i`` written out, central
finite differences of the loss and the output over every parameter (TracInCP), and refits of the last layer
without one row (the influence function).
"""

from __future__ import annotations

import copy
import io
import subprocess
import sys

import numpy as np
import pytest
from sklearn.linear_model import Ridge

torch = pytest.importorskip("torch")

import shap_instances as si  # noqa: E402
from shap_instances.exceptions import (  # noqa: E402
    InvalidParameterError,
    ReconstructionWarning,
    UnsupportedModelError,
    UnsupportedOperationError,
)
from shap_instances.explainers.representer import RepresenterExplainer  # noqa: E402
from shap_instances.neural import fine_tune_last_layer, last_layer_influence, tracin_cp  # noqa: E402


def _net(n_in, n_out, seed=0, hidden=8):
    torch.manual_seed(seed)
    return torch.nn.Sequential(torch.nn.Linear(n_in, hidden), torch.nn.Tanh(), torch.nn.Linear(hidden, 6),
                               torch.nn.ReLU(), torch.nn.Linear(6, n_out))


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(120, 4)).astype(np.float32)
    return X, {"regression": (X[:, 0] - X[:, 1] ** 2, 1), "binary": ((X[:, 0] > 0).astype(int), 1),
               "binary2": ((X[:, 0] > 0).astype(int), 2), "multiclass": (np.digitize(X[:, 0], [-0.5, 0.5]), 3)}


def _fine_tuned_forward(net, head, X):
    """The network with its last layer replaced by the fine-tuned one, run by torch itself (float64)."""
    tuned = copy.deepcopy(net).double().eval()
    coef = np.atleast_2d(head.coef_)
    tuned[-1] = torch.nn.Linear(coef.shape[1], coef.shape[0]).double()
    with torch.no_grad():
        tuned[-1].weight.copy_(torch.as_tensor(coef))
        tuned[-1].bias.copy_(torch.as_tensor(np.atleast_1d(head.intercept_)))
        return tuned(torch.as_tensor(X, dtype=torch.float64)).numpy()


@pytest.mark.parametrize("task", ["regression", "binary", "binary2", "multiclass"])
@pytest.mark.parametrize("penalty", ["l2", "l1"])
def test_identity_output_is_sum_of_training_contributions(data, task, penalty):
    X, tasks = data
    y, n_out = tasks[task]
    if penalty == "l1" and task == "multiclass":
        pytest.skip("l1 fine-tuning is single-output (refused: tested below)")
    net = _net(4, n_out)
    ex = RepresenterExplainer(net, X, y=y, lam=1e-2, penalty=penalty)
    e = ex(X[:10])
    head = ex.fine_tuned_.model[-1]
    expected = _fine_tuned_forward(net, head, X[:10])
    total = e.base_values + e.values.sum(axis=1)
    assert e.values.shape[:2] == (10, 120)
    assert np.max(np.abs(total.reshape(expected.shape) - expected)) <= 1e-6 * max(1.0, np.abs(expected).max())
    assert ex.reconstruction_gap_ < 1e-6


@pytest.mark.parametrize("task", ["regression", "binary"])
def test_global_importance_is_yeh_formula(data, task):
    X, tasks = data
    y, _ = tasks[task]
    net, lam, n = _net(4, 1), 1e-2, len(y)
    ex = RepresenterExplainer(net, X, y=y, lam=lam)
    f, head = ex.fine_tuned_.features, ex.fine_tuned_.model[-1]
    phi = f @ np.ravel(head.coef_) + np.ravel(head.intercept_)[0]
    dL = phi - y if task == "regression" else 1.0 / (1.0 + np.exp(-phi)) - y  # dL/dPhi: L = r^2/2, or BCE
    alpha = -dL / (2 * lam * n)
    np.testing.assert_allclose(ex.global_importance_[:, 0], alpha, rtol=1e-10, atol=1e-14)
    # the stationarity that makes the theorem hold: Theta = sum_i alpha_i f_i
    np.testing.assert_allclose(alpha @ f, np.ravel(head.coef_), rtol=1e-7, atol=1e-10)


def test_dispatch_expected_value_and_network_untouched(data):
    X, tasks = data
    y, _ = tasks["regression"]
    net = _net(4, 1)
    before = {k: v.clone() for k, v in net.state_dict().items()}
    ex = si.Explainer(net, X, y=y)
    assert isinstance(ex, RepresenterExplainer)
    e = ex(X[:3])
    assert np.allclose(e.base_values, ex.expected_value)
    assert net.training and next(net.parameters()).dtype == torch.float32
    assert all(torch.equal(before[k], v) for k, v in net.state_dict().items())
    assert 0.0 <= ex.fine_tuning_fidelity_ < np.inf


def test_stationarity_warning_and_refusals(data):
    X, tasks = data
    y, _ = tasks["regression"]
    net = _net(4, 1)
    with pytest.warns(ReconstructionWarning, match="stationary"):
        RepresenterExplainer(net, X, y=y, atol=1e-30)
    sigmoid = torch.nn.Sequential(net, torch.nn.Sigmoid())
    with pytest.raises(UnsupportedModelError, match="last linear layer"):
        RepresenterExplainer(sigmoid, X, y=y)
    with pytest.raises(UnsupportedModelError, match="layer='nope'"):
        RepresenterExplainer(net, X, y=y, layer="nope")
    with pytest.raises(InvalidParameterError, match="lam"):
        RepresenterExplainer(Ridge().fit(X, y), X, y=y, lam=1.0)
    with pytest.raises(UnsupportedModelError, match="penalty='l2'"):
        RepresenterExplainer(_net(4, 3), X, y=tasks["multiclass"][0], penalty="l1")
    with pytest.raises(ValueError, match="3 classes, the network 2 outputs"):
        RepresenterExplainer(_net(4, 2), X, y=tasks["multiclass"][0])
    with pytest.raises(UnsupportedOperationError, match="torch.save"):
        RepresenterExplainer(net, X, y=y).save(io.BytesIO())


def test_waterfall_names_the_largest_training_row(data):
    import matplotlib

    matplotlib.use("Agg")
    X, tasks = data
    y, _ = tasks["regression"]
    e = RepresenterExplainer(_net(4, 1), X, y=y)(X[:2])
    ax = si.plots.waterfall(e[0], show=False, max_display=4)
    largest = int(np.argmax(np.abs(e.values[0])))
    assert f"train[{largest}]" in [t.get_text().split(" (")[0] for t in ax.get_yticklabels()]


@pytest.mark.slow
def test_package_imports_and_runs_without_torch():
    code = ("import sys\n"
            "class Block:\n"
            "    def find_spec(self, name, path=None, target=None):\n"
            "        if name.split('.')[0] == 'torch': raise ImportError('torch is blocked')\n"
            "sys.meta_path.insert(0, Block())\n"
            "import numpy as np, shap_instances as si\n"
            "from sklearn.linear_model import Ridge\n"
            "X, y = np.random.default_rng(0).normal(size=(20, 3)), np.arange(20.0)\n"
            "e = si.Explainer(Ridge().fit(X, y), X, y=y)(X[:2])\n"
            "assert not si.neural.is_torch_module(object()) and e.values.shape == (2, 20)\n"
            "assert 'torch' not in sys.modules\n"
            "print('ok')")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip().endswith("ok")


# ---------------------------------------------------------------------------------------------- TracInCP

def _finite_difference_tracin(net, X, y, Xq, kind, last_only=False, eps=1e-6):
    """``-grad L(z_i) . grad f(x')`` with both gradients by central differences over the parameters."""
    net = copy.deepcopy(net).double()
    params = list(net.parameters())[-2:] if last_only else list(net.parameters())
    theta = torch.cat([p.detach().reshape(-1) for p in params]).numpy().copy()

    def assign(v):
        with torch.no_grad():
            start = 0
            for p in params:
                p.copy_(torch.as_tensor(v[start:start + p.numel()]).reshape(p.shape))
                start += p.numel()

    def loss(i):
        with torch.no_grad():
            o = net(torch.as_tensor(X[i:i + 1], dtype=torch.float64)).reshape(-1)
            if kind == "regression":
                return float(0.5 * ((o - float(y[i])) ** 2).sum())
            if o.numel() == 1:
                return float(torch.nn.functional.binary_cross_entropy_with_logits(
                    o, torch.tensor([float(y[i])], dtype=torch.float64)))
            return float(torch.nn.functional.cross_entropy(o[None], torch.tensor([int(y[i])])))

    def output(j):
        with torch.no_grad():
            return net(torch.as_tensor(Xq[j:j + 1], dtype=torch.float64)).reshape(-1).numpy().copy()

    def gradient(fun):
        rows = []
        for a in range(theta.size):
            step = np.zeros(theta.size)
            step[a] = eps
            assign(theta + step)
            up = np.asarray(fun())
            assign(theta - step)
            rows.append((up - np.asarray(fun())) / (2 * eps))
        assign(theta)
        return np.array(rows)

    g_loss = np.array([gradient(lambda i=i: loss(i)) for i in range(len(X))])  # (n, P)
    g_out = np.array([gradient(lambda j=j: output(j)) for j in range(len(Xq))])  # (m, P, K)
    return -np.einsum("mpk,np->mnk", g_out, g_loss)


@pytest.mark.parametrize("task", ["regression", "binary", "binary2", "multiclass"])
@pytest.mark.parametrize("params", ["all", "last"])
def test_tracin_matches_finite_differences(data, task, params):
    X, tasks = data
    y, n_out = tasks[task]
    X, y = X[:15].astype(np.float64), y[:15]
    nets = [_net(4, n_out, seed=s, hidden=3) for s in (1, 2)]
    scores = tracin_cp(nets, X, y, X[:3], learning_rates=[0.5, 0.25], params=params)
    reference = sum(rate * _finite_difference_tracin(net, X, y, X[:3], task, last_only=params == "last")
                    for rate, net in zip([0.5, 0.25], nets, strict=True))
    assert np.max(np.abs(scores.reshape(reference.shape) - reference)) < 1e-7 * max(1.0, np.abs(reference).max())
    assert np.abs(reference).max() > 1e-3  # not trivially zero


def test_tracin_refuses_bad_options(data):
    X, tasks = data
    y, _ = tasks["regression"]
    with pytest.raises(InvalidParameterError, match="params"):
        tracin_cp([_net(4, 1)], X, y, X[:2], params="some")
    with pytest.raises(InvalidParameterError, match="empty"):
        tracin_cp([], X, y, X[:2])


# -------------------------------------------------------------------------------------- influence function

def _influence_and_fine_tuned(data, task, n_query, lam=1e-2):
    """The influence scores of ``n_query`` rows, the fine-tuned layer, its training and query features."""
    X, tasks = data
    y, _ = tasks[task]
    net = _net(4, 1)
    scores = last_layer_influence(net, X, y, X[:n_query], lam=lam)
    tuned = fine_tune_last_layer(net, X, y, lam=lam)
    return scores, tuned, tuned.features, tuned.model[0].transform(X[:n_query])


def test_last_layer_influence_is_the_leave_one_out_newton_step(data):
    """Squared loss: the exact leave-one-out change of the refit last layer is ``score / (1 - h_i)``."""
    scores, tuned, f, fq = _influence_and_fine_tuned(data, "regression", 4)
    alpha = tuned.model[-1].alpha  # the same ridge strength, on n - 1 rows too (the penalty is not per row)
    Z = np.hstack([f, np.ones((len(f), 1))])
    H = Z.T @ Z + np.diag(np.r_[np.full(f.shape[1], alpha), 0.0])
    leverage = np.einsum("ij,ji->i", Z, np.linalg.solve(H, Z.T))
    full = tuned.model[-1].predict(fq)
    for i in (0, 7, 33):
        keep = np.arange(len(f)) != i
        refit = Ridge(alpha=alpha, solver="cholesky").fit(f[keep], tuned.targets[keep])
        drop = full - refit.predict(fq)
        np.testing.assert_allclose(scores[:, i] / (1.0 - leverage[i]), drop, rtol=1e-6, atol=1e-10)


def test_last_layer_influence_classifier_tracks_refits(data):
    y = data[1]["binary"][0]
    scores, tuned, f, fq = _influence_and_fine_tuned(data, "binary", 3)
    head = tuned.model[-1]
    drops = []
    for i in range(0, 120, 12):
        keep = np.arange(len(f)) != i
        refit = copy.deepcopy(head).fit(f[keep], y[keep])
        drops.append(head.decision_function(fq) - refit.decision_function(fq))
    drops = np.array(drops).T
    assert np.corrcoef(scores[:, ::12].ravel(), drops.ravel())[0, 1] > 0.99


# ------------------------------------------------------------------------------------------- two towers

def test_two_tower_identity_and_fine_tuned_items_are_per_item_ridges():
    from shap_instances.neural import TwoTowerRepresenter

    rng = np.random.default_rng(3)
    U = rng.normal(size=(30, 4))
    pairs = np.argwhere(rng.random((30, 12)) < 0.4)
    r = rng.normal(size=len(pairs))
    lam, mu = 1e-2, 0.3
    rep = TwoTowerRepresenter(U, pairs, r, n_items=12, lam=lam, offset=mu, item_embeddings=rng.normal(size=(12, 4)))
    for i in (0, 5, 11):  # each item embedding is sklearn's ridge on the item's raters
        rated = pairs[:, 1] == i
        ridge = Ridge(alpha=2 * lam * len(r), fit_intercept=False).fit(U[pairs[rated, 0]], r[rated] - mu)
        np.testing.assert_allclose(rep.item_factors_[i], ridge.coef_, rtol=1e-8, atol=1e-12)
    explained = np.array([[0, 3], [29, 11], [7, 0]])
    e = rep(explained)
    truth = mu + np.einsum("ij,ij->i", U[explained[:, 0]], rep.item_factors_[explained[:, 1]])
    np.testing.assert_allclose(e.base_values + e.values.sum(1), truth, rtol=1e-10)
    u, i = explained[1]
    alpha = [(r[t] - mu - U[pairs[t, 0]] @ rep.item_factors_[pairs[t, 1]]) / (2 * lam * len(r)) for t in range(len(r))]
    brute = [alpha[t] * (U[pairs[t, 0]] @ U[u]) if pairs[t, 1] == i else 0.0 for t in range(len(r))]
    np.testing.assert_allclose(e.values[1], brute, rtol=1e-10, atol=1e-14)
    assert rep.optimality_violation_ < 1e-10 and np.isfinite(rep.fidelity_)


def test_float_targets_are_regression_even_when_integral(data):
    X, _ = data
    y = np.round(np.abs(X[:, 0]) * 2).astype(np.float64)  # ratings-like floats 0.0 .. 5.0
    ex = RepresenterExplainer(_net(4, 1), X, y=y)
    assert ex.fine_tuned_.task == "squared"
